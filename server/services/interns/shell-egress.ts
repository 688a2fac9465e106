import { spawn } from "node:child_process";
import { promises as dns } from "node:dns";
import { readFile } from "node:fs/promises";
import net from "node:net";
import type { GatewayConfig } from "../../platform/config.js";
import { processRuns } from "../../platform/workers/process-runs.js";
import type { Logger } from "../../platform/logger.js";
import { shellIsolation } from "./intern-home.js";
import { CLOSED_PORTS, egressRuleset, isMetadataAddress, type EgressPlan } from "./shell-egress-rules.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * What interns' shells may reach on the network. A root gateway runs each intern's shell as its
 * own uid (intern-home.ts), so the kernel can tell their packets apart: an nftables table of this
 * process (its rules and their order: shell-egress-rules.ts) holds those uids to what the `fetch`
 * tool may call, and keeps them off the cloud metadata services, the gateway's and its intern
 * hosts' ports, the database, and the name servers' other ports. The rest of the internet stays
 * open, so a shell can still download a package.
 *
 * Installed before the gateway listens; the listeners' and each intern host's ports are added to
 * the table's set of closed ports as they are known, and a host's port is taken out when it exits.
 *
 * Needs root and the `nft` program (Debian's `nftables`). Without them the gateway says so at
 * start, loudly, and shells are not filtered (docs/security.md).
 */
export interface ShellEgress {
  /** Whether the rules are in force. */
  readonly filtered: boolean;
  /**
   * Closes a port of this gateway (a listener's, an intern host's) on every address. Counted: a
   * port the next host is given before the last one's is reopened stays closed.
   */
  closePort(port: number): Promise<void>;
  /** Undoes one closePort. */
  reopenPort(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ShellEgressOptions {
  /** The interns' shell uids: `[first, last]`. */
  uids: [number, number];
  /** Ports closed on every address from the start (more with closePort). */
  ports: number[];
  /** Hostnames and addresses let through (the fetch tool's allowed hosts). */
  allowedHosts: readonly string[];
  /** The database's host (a name or an address) and port, closed on its addresses. */
  database?: { host: string; port: number };
  /** Where the system's name servers are listed; tests write their own. Default /etc/resolv.conf. */
  resolvConf?: string;
  log: Logger;
}

const TABLE_PREFIX = "gateway_shells_";
/** Tables of this process so far: a test process may run several gateways, each with its own table. */
let tablesMade = 0;

/** Uids past the base that the rules cover: one intern each (intern-home.ts). */
const SHELL_UIDS = 1_000_000;

const UNFILTERED: ShellEgress = {
  filtered: false,
  closePort: async () => {},
  reopenPort: async () => {},
  stop: async () => {},
};

/** The rules for this gateway's interns when their shells have uids of their own, else nothing to do. */
export function shellEgressFor(config: GatewayConfig, databaseUrl: string, log: Logger): Promise<ShellEgress> {
  if (!shellIsolation(config)) return Promise.resolve(UNFILTERED);
  const base = config.internRuntime.shellUidBase;
  const database = databaseDestination(databaseUrl);
  return restrictShellEgress({
    uids: [base, base + SHELL_UIDS - 1],
    ports: [],
    allowedHosts: config.internRuntime.fetchAllowedHosts,
    ...(database ? { database } : {}),
    log,
  });
}

/**
 * The host and port a PostgreSQL URL connects to (a `host` query parameter wins, as for Sequelize
 * and pg); none for a Unix socket (no host, or a path). The password in the URL goes nowhere.
 */
export function databaseDestination(databaseUrl: string): { host: string; port: number } | undefined {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return undefined;
  }
  const host = (url.searchParams.get("host") ?? decodeURIComponent(url.hostname)).replace(/^\[|\]$/g, "");
  if (host === "" || host.startsWith("/")) return undefined;
  return { host, port: url.port === "" ? 5432 : Number(url.port) };
}

export async function restrictShellEgress(options: ShellEgressOptions): Promise<ShellEgress> {
  const table = `${TABLE_PREFIX}${process.pid}_${++tablesMade}`;
  const { log } = options;
  try {
    await removeStaleTables();
    await nft(["-f", "-"], egressRuleset(table, await planOf(options)));
  } catch (err) {
    log.error(
      { err: errorMessage(err) },
      "interns' shells are NOT network-filtered: " +
        "the egress rules could not be installed (root and nftables' nft are needed)",
    );
    return UNFILTERED;
  }
  log.info({ table }, "interns' shells are network-filtered");
  const closed = new Map<number, number>();
  // One nft at a time, in call order: a reopen never overtakes the close it undoes.
  let queue = Promise.resolve();
  let stopped = false;
  const inTurn = (what: string, args: string[]) => {
    queue = queue.then(async () => {
      if (stopped) return;
      await nft(args).catch((err: unknown) => log.error({ err: errorMessage(err) }, what));
    });
    return queue;
  };
  const element = (verb: "add" | "delete", port: number) => [
    verb,
    "element",
    "inet",
    table,
    CLOSED_PORTS,
    `{ ${port} }`,
  ];
  return {
    filtered: true,
    closePort(port) {
      const count = closed.get(port) ?? 0;
      closed.set(port, count + 1);
      return count > 0
        ? queue
        : inTurn(`port ${port} could not be closed to interns' shells: it stays open to them`, element("add", port));
    },
    reopenPort(port) {
      const count = closed.get(port) ?? 0;
      if (count > 1) closed.set(port, count - 1);
      else closed.delete(port);
      return count === 1
        ? inTurn(`port ${port} could not be reopened to interns' shells`, element("delete", port))
        : queue;
    },
    async stop() {
      await queue;
      if (stopped) return;
      stopped = true;
      await nft(["delete", "table", "inet", table]).catch((err: unknown) =>
        log.warn({ err: errorMessage(err) }, "the shells' egress table could not be removed"),
      );
    },
  };
}

/** The addresses the rules name: the database's, the name servers, the allowed hosts'. */
async function planOf(options: ShellEgressOptions): Promise<EgressPlan> {
  const { log } = options;
  const nameServers = await nameServersOf(options.resolvConf ?? "/etc/resolv.conf");
  for (const nameServer of nameServers.filter(isMetadataAddress)) {
    log.warn(
      { nameServer },
      "a name server is a cloud metadata address, which interns' shells never reach: " +
        "they cannot resolve names through it (docs/security.md)",
    );
  }
  const allowed = new Set<string>();
  for (const host of options.allowedHosts) {
    const addresses = await addressesOf(host);
    if (addresses.some(isMetadataAddress))
      log.warn(
        { host },
        "an allowed host is a cloud metadata address, which interns' shells never reach (docs/security.md)",
      );
    for (const address of addresses) allowed.add(address);
  }
  const database = options.database
    ? { addresses: await addressesOf(options.database.host), port: options.database.port }
    : undefined;
  if (options.database && database?.addresses.length === 0)
    log.warn("the database's host could not be resolved: its port is not closed to interns' shells by address");
  return { uids: options.uids, ports: options.ports, database, nameServers, allowed: [...allowed] };
}

/** A host's addresses, each written one way (so that a set never holds one twice). */
async function addressesOf(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  const found = net.isIP(bare)
    ? [bare]
    : (await dns.lookup(bare, { all: true }).catch(() => [])).map(({ address }) => address);
  return [...new Set(found.map(canonical))];
}

async function nameServersOf(resolvConf: string): Promise<string[]> {
  const text = await readFile(resolvConf, "utf8").catch(() => "");
  const listed = [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((m) => m[1]!.replace(/%.*$/, ""))
    .filter((a) => net.isIP(a) !== 0);
  return [...new Set(listed.map(canonical))];
}

/** "0::1" and "::1" are one address: the URL parser writes IPv6 one way. */
function canonical(address: string): string {
  return net.isIP(address) === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address;
}

/** Tables of gateways on this machine that are gone (a `kill -9` leaves its table behind). */
async function removeStaleTables(): Promise<void> {
  const listing = await nft(["list", "tables"]);
  for (const [, name, pid] of listing.matchAll(new RegExp(`^table inet (${TABLE_PREFIX}(\\d+)_\\d+)$`, "gm"))) {
    if (!processRuns(Number(pid))) await nft(["delete", "table", "inet", name!]).catch(() => undefined);
  }
}

function nft(args: string[], input = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("nft", args, { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`nft ${args.join(" ")}: ${err.trim() || `exit ${code}`}`)),
    );
    // nft exits without reading its input when it has none to read (or fails first): its exit says what happened.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

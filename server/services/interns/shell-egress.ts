import { spawn } from "node:child_process";
import { promises as dns } from "node:dns";
import { readFile } from "node:fs/promises";
import net from "node:net";
import type { GatewayConfig } from "../../platform/config.js";
import { processRuns } from "../../platform/core/process-runs.js";
import type { Logger } from "../../platform/logger.js";
import { shellIsolation } from "./intern-home.js";
import { HOST_SERVICES_V4, NON_PUBLIC_V4, NON_PUBLIC_V6 } from "../../platform/outbound/destination-guard.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * What interns' shells may reach on the network. A root gateway runs each intern's shell as its
 * own uid (intern-home.ts), so the kernel can tell their packets apart: an nftables table of this
 * process rejects, for those uids only, every connection to the addresses the `fetch` tool may not
 * call either (loopback, link-local with the cloud metadata services, private and other non-public
 * ranges) and to the gateway's own ports on any address. The rest of the internet stays open, so a
 * shell can still download a package. Addresses the operator opened for `fetch`
 * (`GATEWAY_INTERN_FETCH_ALLOWED_HOSTS`, resolved at start) and the system's DNS servers (a shell
 * must resolve names, and the resolver is often on loopback or a private address) are let through,
 * though never to the gateway's ports.
 *
 * The documentation ranges (TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20) are the one difference from
 * `fetch`'s guard: nothing real lives there, so blocking them protects nothing, and a test can
 * prove that the shell still reaches the outside through an address of its own there.
 *
 * Needs root and the `nft` program (Debian's `nftables`). Without them the gateway says so at
 * start, loudly, and shells are not filtered (docs/operating.md, "Security").
 */
export interface ShellEgress {
  /** Whether the rules are in force. */
  readonly filtered: boolean;
  stop(): Promise<void>;
}

export interface ShellEgressOptions {
  /** The interns' shell uids: `[first, last]`. */
  uids: [number, number];
  /** The gateway's own TCP ports (HTTP, gRPC, the database's when local), closed on every address. */
  ports: number[];
  /** Host names and addresses let through (the fetch tool's allowed hosts). */
  allowedHosts: readonly string[];
  log: Logger;
}

const TABLE_PREFIX = "gateway_shells_";
/** Ranges that a real network never routes: left open (see above). */
const DOCUMENTATION = new Set(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20"]);

/** Uids past the base that the rules cover: one intern each (intern-home.ts). */
const SHELL_UIDS = 1_000_000;

/** The rules for this gateway's interns when their shells have uids of their own, else nothing to do. */
export function shellEgressFor(config: GatewayConfig, ports: number[], allowedHosts: readonly string[], log: Logger): Promise<ShellEgress> {
  if (!shellIsolation(config)) return Promise.resolve({ filtered: false, stop: async () => {} });
  const base = config.internRuntime.shellUidBase;
  return restrictShellEgress({ uids: [base, base + SHELL_UIDS - 1], ports, allowedHosts, log });
}

export async function restrictShellEgress(options: ShellEgressOptions): Promise<ShellEgress> {
  // Per process and port: a test process may run several gateways, each with its own rules.
  const table = `${TABLE_PREFIX}${process.pid}_${options.ports[0] ?? 0}`;
  try {
    await removeStaleTables();
    await nft(["-f", "-"], ruleset(table, options, await openAddresses(options.allowedHosts)));
  } catch (err) {
    options.log.error({ err: errorMessage(err) }, "interns' shells are NOT network-filtered: the egress rules could not be installed (root and nftables' nft are needed)");
    return { filtered: false, stop: async () => {} };
  }
  options.log.info({ table }, "interns' shells are network-filtered");
  let stopped = false;
  return {
    filtered: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await nft(["delete", "table", "inet", table]).catch((err: unknown) => options.log.warn({ err: errorMessage(err) }, "the shells' egress table could not be removed"));
    },
  };
}

function ruleset(table: string, { uids, ports }: ShellEgressOptions, open: { v4: string[]; v6: string[] }): string {
  const shells = `meta skuid ${uids[0]}-${uids[1]}`;
  const set = (items: string[]) => `{ ${items.join(", ")} }`;
  const denied = (ranges: Array<[string, number]>) => ranges.map(([network, prefix]) => `${network}/${prefix}`).filter((cidr) => !DOCUMENTATION.has(cidr));
  const lines = [
    `table inet ${table} {`,
    "  chain output {",
    "    type filter hook output priority 0; policy accept;",
    ...(ports.length > 0 ? [`    ${shells} tcp dport ${set(ports.map(String))} reject with tcp reset`] : []),
    ...(open.v4.length > 0 ? [`    ${shells} ip daddr ${set(open.v4)} accept`] : []),
    ...(open.v6.length > 0 ? [`    ${shells} ip6 daddr ${set(open.v6)} accept`] : []),
    `    ${shells} ip daddr ${set(denied([...NON_PUBLIC_V4, ...HOST_SERVICES_V4]))} reject`,
    `    ${shells} ip6 daddr ${set(denied(NON_PUBLIC_V6))} reject`,
    "  }",
    "}",
  ];
  return `${lines.join("\n")}\n`;
}

/** The allowed hosts' addresses and the system's name servers, by family. */
async function openAddresses(allowedHosts: readonly string[]): Promise<{ v4: string[]; v6: string[] }> {
  const addresses = new Set<string>(await nameServers());
  for (const host of allowedHosts) {
    const bare = host.replace(/^\[|\]$/g, "");
    if (net.isIP(bare)) addresses.add(bare);
    else for (const { address } of await dnsLookup(bare)) addresses.add(address);
  }
  const all = [...addresses];
  return { v4: all.filter((a) => net.isIP(a) === 4), v6: all.filter((a) => net.isIP(a) === 6) };
}

async function nameServers(): Promise<string[]> {
  const text = await readFile("/etc/resolv.conf", "utf8").catch(() => "");
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1]!.replace(/%.*$/, "")).filter((a) => net.isIP(a) !== 0);
}

function dnsLookup(host: string): Promise<Array<{ address: string }>> {
  return dns.lookup(host, { all: true }).catch(() => []);
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
    child.once("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`nft ${args.join(" ")}: ${err.trim() || `exit ${code}`}`))));
    // nft exits without reading its input when it has none to read (or fails first): its exit says what happened.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

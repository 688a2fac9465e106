import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import * as assert from "uvu/assert";
import { isPublicAddress } from "../../../egress/destination-guard.js";
import { restrictShellEgress, type ShellEgress } from "../../../server/services/interns/shell-egress.js";
import { eventually } from "../../support/eventually.js";
import { captureLogs, type CapturedLogs } from "../../support/log-lines.js";
import { missingTools, notRoot } from "../../support/required-tools.js";
import { suite } from "../../support/suite.js";

/**
 * Which destinations the shells' egress rules (server/services/interns/shell-egress-rules.ts) let
 * through, installed here for one uid of the test's own, with a resolv.conf of the test's own that
 * lists a loopback name server (as systemd-resolved's 127.0.0.53) and two metadata addresses. A
 * probe runs as that uid; the same connection from the test itself (root, outside the rules) is
 * the control, so that a refusal is the rules' and not a missing server. The "remote" addresses
 * live in a network namespace behind a veth pair: a link-local (metadata) address, a documentation
 * address that stands in for the internet, and IPv6 NAT64 and 6to4 addresses.
 */
interface Ctx {
  egress: ShellEgress;
  logs: CapturedLogs;
  dir: string;
}

const SUITE = "interns: shell egress destinations";
const test = suite<Ctx>(SUITE);
/** Below every gateway's shell uids (from 100000, test/support/gateway.ts), so no other table applies to it. */
const SHELL_UID = 90_000 + (process.pid % 10_000);
const NS = `gwdest${process.pid}`;
const OUTSIDE = `gwd${process.pid}a`.slice(0, 15);
const INSIDE = `gwd${process.pid}b`.slice(0, 15);
/**
 * This machine's own addresses on the veth: the namespace's peers (TEST-NET-2:
 * shell-egress.test.ts, which may run at the same time, uses TEST-NET-3).
 */
const LOCAL = "198.51.100.1";
const LOCAL6 = "2001:db8:77::1";
const PUBLIC = "198.51.100.2";
const METADATA = "169.254.77.7";
const METADATA6 = "fd00:ec2::254";
const LOOPBACK_NAME_SERVER = "127.77.0.53";
/**
 * NAT64 and 6to4 forms: of the metadata address, of loopback, of 10.0.0.1, of 8.8.8.8; and one an
 * allowed hostnames.
 */
const NAT64_METADATA = "64:ff9b::a9fe:4d07";
const NAT64_LOOPBACK = "64:ff9b::7f00:1";
const SIXTOFOUR_PRIVATE = "2002:a00:1::1";
const NAT64_PUBLIC = "64:ff9b::808:808";
const SIXTOFOUR_PUBLIC = "2002:808:808::1";
const NAT64_ALLOWED = "64:ff9b::a00:2";
const REMOTE_V4 = [PUBLIC, METADATA];
const REMOTE_V6 = [
  METADATA6,
  NAT64_METADATA,
  NAT64_LOOPBACK,
  SIXTOFOUR_PRIVATE,
  NAT64_PUBLIC,
  SIXTOFOUR_PUBLIC,
  NAT64_ALLOWED,
];
const PORT = 18_214;
const DB_PORT = 18_215;
const HOST_PORT = 18_216;

const blocked =
  notRoot(test, { suite: SUITE, why: "only root installs egress rules and runs a probe as another uid" }) ||
  missingTools(test, {
    suite: SUITE,
    missing: ["/usr/sbin/nft", "/usr/sbin/ip"].filter((tool) => !fs.existsSync(tool)),
    install: "apt-get install nftables iproute2",
  });

let remoteServers: ChildProcess | undefined;
const localServers: Array<net.Server | dgram.Socket> = [];

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: "pipe" });
}

/** A TCP server that says hello naming where it listens, and closes. */
function hello(host: string, port: number): Promise<void> {
  const server = net.createServer((socket) => socket.end(`hello ${host}:${port}`));
  localServers.push(server);
  return new Promise((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
}

/** What the probe prints: `hello …` (the server's greeting), `CONNECTED`, the error code, or `TIMEOUT`. */
const PROBE = `
const [proto, host, port] = process.argv.slice(1);
const done = (what) => { console.log(what); process.exit(0); };
setTimeout(() => done("TIMEOUT"), 5000).unref();
if (proto === "udp") {
  const socket = require("dgram").createSocket(host.includes(":") ? "udp6" : "udp4");
  socket.on("error", (e) => done(e.code));
  socket.on("message", (m) => done(String(m)));
  socket.connect(Number(port), host, () => socket.send("ping"));
} else {
  const socket = require("net").connect(Number(port), host);
  socket.on("data", (d) => done(String(d)));
  socket.on("connect", () => setTimeout(() => done("CONNECTED"), 500));
  socket.on("error", (e) => done(e.code));
}`;

/** The probe as the shells' uid, under the rules. */
function fromShell(host: string, port: number, proto: "tcp" | "udp" = "tcp"): Promise<string> {
  return probe(host, port, proto, { uid: SHELL_UID, gid: SHELL_UID });
}

/** The probe as the test's own user (root, outside the rules): the control. */
function fromTest(host: string, port: number, proto: "tcp" | "udp" = "tcp"): Promise<string> {
  return probe(host, port, proto, {});
}

function probe(
  host: string,
  port: number,
  proto: "tcp" | "udp",
  user: { uid?: number; gid?: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["-e", PROBE, proto, host, String(port)],
      { ...user, cwd: "/", env: {} },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim())),
    );
  });
}

if (!blocked) {
  test.before(async (context) => {
    ip("netns", "add", NS);
    ip("link", "add", OUTSIDE, "type", "veth", "peer", "name", INSIDE);
    ip("link", "set", INSIDE, "netns", NS);
    ip("addr", "add", `${LOCAL}/32`, "dev", OUTSIDE);
    ip("-6", "addr", "add", `${LOCAL6}/128`, "dev", OUTSIDE, "nodad");
    ip("link", "set", OUTSIDE, "up");
    for (const address of REMOTE_V4) ip("route", "add", `${address}/32`, "dev", OUTSIDE, "src", LOCAL);
    for (const address of REMOTE_V6) ip("-6", "route", "add", `${address}/128`, "dev", OUTSIDE, "src", LOCAL6);
    const inside = (...args: string[]) => ip("netns", "exec", NS, "ip", ...args);
    inside("link", "set", "lo", "up");
    inside("link", "set", INSIDE, "up");
    for (const address of REMOTE_V4) inside("addr", "add", `${address}/32`, "dev", INSIDE);
    for (const address of REMOTE_V6) inside("-6", "addr", "add", `${address}/128`, "dev", INSIDE, "nodad");
    inside("route", "add", `${LOCAL}/32`, "dev", INSIDE);
    inside("-6", "route", "add", `${LOCAL6}/128`, "dev", INSIDE);
    // Inside the namespace: every address on PORT and 53, the "database" on PUBLIC's DB_PORT.
    const listens = [
      ...[...REMOTE_V4, ...REMOTE_V6].flatMap((host) => [[host, PORT] as const, [host, 53] as const]),
      [PUBLIC, DB_PORT] as const,
    ];
    const script =
      `for (const [host, port] of ${JSON.stringify(listens)}) require("net").createServer((s) ` +
      `=> s.end("hello " + host + ":" + port)).listen(port, host);`;
    remoteServers = spawn("ip", ["netns", "exec", NS, process.execPath, "-e", script], { stdio: "ignore" });

    // On this machine: the loopback name server (TCP and UDP 53, and another port), and a port to close.
    await hello(LOOPBACK_NAME_SERVER, 53);
    await hello(LOOPBACK_NAME_SERVER, PORT);
    await hello(LOCAL, HOST_PORT);
    const udp = dgram.createSocket("udp4");
    localServers.push(udp);
    udp.on("message", (_message, from) => udp.send(`hello ${LOOPBACK_NAME_SERVER}:53/udp`, from.port, from.address));
    await new Promise<void>((resolve) => udp.bind(53, LOOPBACK_NAME_SERVER, resolve));

    context.dir = fs.mkdtempSync(path.join(os.tmpdir(), "shell-egress-"));
    const resolvConf = path.join(context.dir, "resolv.conf");
    fs.writeFileSync(
      resolvConf,
      `nameserver ${LOOPBACK_NAME_SERVER}\nnameserver ${METADATA}\nnameserver ${METADATA6}\noptions edns0\n`,
    );
    context.logs = captureLogs();
    context.egress = await restrictShellEgress({
      uids: [SHELL_UID, SHELL_UID],
      ports: [],
      allowedHosts: [METADATA, `[${METADATA6}]`, NAT64_METADATA, NAT64_ALLOWED],
      database: { host: PUBLIC, port: DB_PORT },
      resolvConf,
      log: context.logs.log,
    });
    assert.ok(context.egress.filtered, JSON.stringify(context.logs.lines));
    await eventually(() => fromTest(NAT64_ALLOWED, PORT), "the namespace's servers listen", {
      until: (answer) => answer.startsWith("hello"),
    });
  });

  test.after(async (context) => {
    await context.egress?.stop();
    remoteServers?.kill("SIGKILL");
    for (const server of localServers) server.close();
    try {
      ip("link", "del", OUTSIDE);
    } catch {
      // Already gone with the namespace.
    }
    ip("netns", "del", NS);
    if (context.dir) fs.rmSync(context.dir, { recursive: true, force: true });
  });

  test("a loopback name server answers the shell on port 53, over TCP and UDP, and on no other port", async () => {
    assert.is(await fromTest(LOOPBACK_NAME_SERVER, PORT), `hello ${LOOPBACK_NAME_SERVER}:${PORT}`);
    assert.is(await fromShell(LOOPBACK_NAME_SERVER, 53), `hello ${LOOPBACK_NAME_SERVER}:53`);
    assert.is(await fromShell(LOOPBACK_NAME_SERVER, 53, "udp"), `hello ${LOOPBACK_NAME_SERVER}:53/udp`);
    assert.is(await fromShell(LOOPBACK_NAME_SERVER, PORT), "ECONNREFUSED");
  });

  test("a metadata address is refused though it is a name server and an allowed host, on port 53 too", async ({
    logs,
  }) => {
    for (const host of [METADATA, METADATA6, NAT64_METADATA]) {
      for (const port of [53, PORT]) {
        assert.is(await fromTest(host, port), `hello ${host}:${port}`, "the control reaches it");
        assert.is(await fromShell(host, port), "ECONNREFUSED", `${host}:${port}`);
      }
    }
    const warnings = logs.lines.filter((line) => /cloud metadata address/.test(line.msg));
    assert.equal(
      warnings.map(({ nameServer, host }) => nameServer ?? host),
      [METADATA, METADATA6, METADATA, `[${METADATA6}]`, NAT64_METADATA],
      "the operator is told that shells cannot use them",
    );
  });

  test(
    "NAT64 and 6to4 addresses are refused to the shell, " + "of private and public IPv4 hosts alike, unless allowed",
    async () => {
      const cases: Array<[string, boolean]> = [
        [NAT64_LOOPBACK, false],
        [SIXTOFOUR_PRIVATE, false],
        [NAT64_PUBLIC, true],
        [SIXTOFOUR_PUBLIC, true],
      ];
      for (const [host, isPublic] of cases) {
        assert.is(isPublicAddress(host), isPublic, `the guard's verdict on ${host}`);
        assert.is(await fromTest(host, PORT), `hello ${host}:${PORT}`, "the control reaches it");
        assert.is(await fromShell(host, PORT), "ECONNREFUSED", host);
      }
      assert.not.ok(isPublicAddress(NAT64_ALLOWED));
      assert.is(
        await fromShell(NAT64_ALLOWED, PORT),
        `hello ${NAT64_ALLOWED}:${PORT}`,
        "an allowed host's own address is accepted",
      );
    },
  );

  test("the database's port is refused on the database's address, whose other ports stay as they were", async () => {
    assert.is(await fromTest(PUBLIC, DB_PORT), `hello ${PUBLIC}:${DB_PORT}`);
    assert.is(await fromShell(PUBLIC, DB_PORT), "ECONNREFUSED");
    assert.is(await fromShell(PUBLIC, PORT), `hello ${PUBLIC}:${PORT}`);
  });

  test("a closed port (an intern host's) is refused on every address until each close is undone", async ({
    egress,
  }) => {
    assert.is(await fromShell(LOCAL, HOST_PORT), `hello ${LOCAL}:${HOST_PORT}`, "open before");
    // Two hosts given the same port one after the other: the first one's exit must not open the second's.
    await egress.closePort(HOST_PORT);
    await egress.closePort(HOST_PORT);
    assert.is(await fromShell(LOCAL, HOST_PORT), "ECONNREFUSED");
    await egress.reopenPort(HOST_PORT);
    assert.is(await fromShell(LOCAL, HOST_PORT), "ECONNREFUSED", "still closed for the second");
    await egress.reopenPort(HOST_PORT);
    assert.is(await fromShell(LOCAL, HOST_PORT), `hello ${LOCAL}:${HOST_PORT}`, "open once both are gone");
  });
}

test.run();

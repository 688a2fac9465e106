import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import {
  ChatStream,
  contentOf,
  promptBody,
  runtimeSuite,
  shellStep,
  type RuntimeContext,
} from "../../support/intern-runtime.js";
import { at, call } from "../../support/http.js";
import { missingTools, notRoot } from "../../support/required-tools.js";

/**
 * What an intern's shell reaches on the network (server/services/interns/shell-egress.ts). Addresses of the
 * test's own stand in for the outside world: a network namespace made here holds a "public" host
 * (203.0.113.2, a documentation address, which the rules leave open) and a "private" one
 * (10.213.7.2), each with a TCP server, routed through a veth pair. The shell runs as the intern's
 * uid through a real intern and a scripted model. The intern's host listens on every address, as on
 * a gateway whose other instances relay to it; shell-egress-destinations.test.ts tries the rules
 * against name servers, metadata addresses and NAT64 forms.
 */
const SUITE = "interns: shell egress";
const test = runtimeSuite(SUITE, {
  intern: "netizen",
  settings: { GATEWAY_INTERN_HOST_LISTEN: "0.0.0.0", GATEWAY_INTERN_HOST_ADVERTISE: "127.0.0.1" },
});
const NS = `gwegress${process.pid}`;
const OUTSIDE = `gwe${process.pid}a`.slice(0, 15);
const INSIDE = `gwe${process.pid}b`.slice(0, 15);
const PUBLIC = "203.0.113.2";
const PRIVATE = "10.213.7.2";
const PORT = 18_213;

const blocked =
  notRoot(test, { suite: SUITE, why: "only root gives interns' shells their own uids and installs egress rules" }) ||
  missingTools(test, {
    suite: SUITE,
    missing: ["/usr/sbin/nft", "/usr/sbin/ip"].filter((tool) => !fs.existsSync(tool)),
    install: "apt-get install nftables iproute2",
  });

let servers: ChildProcess | undefined;

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: "pipe" });
}

if (!blocked) {
  test.before(() => {
    ip("netns", "add", NS);
    ip("link", "add", OUTSIDE, "type", "veth", "peer", "name", INSIDE);
    ip("link", "set", INSIDE, "netns", NS);
    ip("addr", "add", "203.0.113.1/32", "dev", OUTSIDE);
    ip("link", "set", OUTSIDE, "up");
    for (const address of [PUBLIC, PRIVATE]) ip("route", "add", `${address}/32`, "dev", OUTSIDE, "src", "203.0.113.1");
    ip("netns", "exec", NS, "ip", "link", "set", "lo", "up");
    ip("netns", "exec", NS, "ip", "link", "set", INSIDE, "up");
    for (const address of [PUBLIC, PRIVATE])
      ip("netns", "exec", NS, "ip", "addr", "add", `${address}/32`, "dev", INSIDE);
    ip("netns", "exec", NS, "ip", "route", "add", "203.0.113.1/32", "dev", INSIDE);
    // One TCP server on each address inside the namespace; it says hello and closes.
    const script =
      `for (const host of ${JSON.stringify([PUBLIC, PRIVATE])}) ` +
      `require("net").createServer((s) => s.end("hello " + host)).listen(${PORT}, host);`;
    servers = spawn("ip", ["netns", "exec", NS, process.execPath, "-e", script], { stdio: "ignore" });
  });

  test.after(() => {
    servers?.kill("SIGKILL");
    try {
      ip("link", "del", OUTSIDE);
    } catch {
      // Already gone with the namespace.
    }
    ip("netns", "del", NS);
  });

  /** What a TCP connection from the intern's shell to host:port ended in: `hello …`, or the error code. */
  async function fromShell(context: RuntimeContext, host: string, port: number): Promise<string> {
    const { env, internId } = context;
    const probe =
      `const s=require("net").connect(${port},"${host}");` +
      `s.setTimeout(3000,()=>{console.log("TIMEOUT");process.exit()});` +
      `s.on("data",(d)=>{console.log(String(d));process.exit()});` +
      `s.on("connect",()=>setTimeout(()=>{console.log("CONNECTED");process.exit()},500));` +
      `s.on("error",(e)=>{console.log(e.code);process.exit()})`;
    const name = `probe-${host}-${port}`.replace(/[^a-z0-9-]/gi, "-");
    env.upstream.scripts.define(name, [
      shellStep(`${process.execPath} -e '${probe}'`),
      { reply: "{{last_tool_result}}" },
    ]);
    const stream = await ChatStream.open(env.gw.url, env.key, internId, promptBody(`[script:${name}] probe`));
    assert.is(stream.status, 200, JSON.stringify(stream.body));
    return contentOf(await stream.rest());
  }

  /** The same connection from the test itself (root, outside the rules): the control. */
  function fromTest(host: string, port: number): Promise<string> {
    return new Promise((resolve) => {
      const socket = net.connect(port, host);
      socket.on("data", (data) => resolve(String(data)));
      socket.on("connect", () => setTimeout(() => resolve("CONNECTED"), 500));
      socket.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
    });
  }

  test("a public address stays reachable from the shell", async (context) => {
    await eventually(() => fromTest(PUBLIC, PORT), "the test's own servers listen", {
      until: (answer) => answer.startsWith("hello"),
    });
    assert.match(await fromShell(context, PUBLIC, PORT), `hello ${PUBLIC}`);
  });

  test("a private address is refused to the shell, though the host reaches it", async (context) => {
    assert.match(await fromTest(PRIVATE, PORT), `hello ${PRIVATE}`);
    assert.match(await fromShell(context, PRIVATE, PORT), "ECONNREFUSED");
  });

  test("the gateway's own port is refused to the shell", async (context) => {
    const port = Number(new URL(context.env.gw.url).port);
    assert.match(await fromTest("127.0.0.1", port), "CONNECTED");
    assert.match(await fromShell(context, "127.0.0.1", port), "ECONNREFUSED");
  });

  test("the intern host's port is refused to the shell on this machine's own non-loopback address", async (context) => {
    const intern = await call(context.env.gw.url, "GET", `/api/v1/interns/${context.internId}`, {
      key: context.env.key,
    });
    const port = Number(new URL(`http://${String(at(intern.body, "data", "hostname"))}`).port);
    // 203.0.113.1 is this machine's end of the veth pair: a documentation address, which the rules
    // leave open but for closed ports.
    assert.match(await fromTest("203.0.113.1", port), "CONNECTED");
    assert.match(await fromShell(context, "203.0.113.1", port), "ECONNREFUSED");
  });

  test("the cloud metadata address is refused to the shell at once", async (context) => {
    // Nothing answers there on this machine; without the rules the attempt would time out or find no route.
    assert.match(await fromShell(context, "169.254.169.254", 80), "ECONNREFUSED");
  });
}

test.run();

import net from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import http2 from "node:http2";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { UploadFileRequestSchema } from "../../gen/gateway/v1/files_pb.js";
import { loadConfig } from "../../server/platform/config.js";
import { newKeySecret } from "../../server/platform/secrets/key-secret.js";
import { eventually } from "../support/eventually.js";
import { createDatabase, startTestGateway, type TestGateway } from "../support/gateway.js";
import { startGatewayProcess, type GatewayProcess } from "../support/gateway-process.js";
import {
  envelope,
  grpcStatusOf,
  gzipBomb,
  h1Request,
  h2Request,
  peakRssGrowthMiB,
  type WireReply,
} from "../support/rpc-wire.js";

const run = promisify(execFile);

/**
 * The Connect, gRPC-Web and gRPC doors read what the REST facade would and no more: a call that
 * needs a key and has none (or an unknown one) is refused from its headers, its body neither read
 * nor inflated; with a key, a body is read up to its method's `max_body_bytes` (the facade's
 * default without one), inflated size included. The gateway's peak resident memory is read from
 * its process: a 1 GiB body inflated there shows as gigabytes, a refusal as next to nothing.
 * Then the listeners' own limits, each set small for the test and watched happen: slow headers,
 * idle connections and sessions, the connection cap, the streams of one HTTP/2 session.
 */
const doors = suite<{ gw: GatewayProcess; key: string; grpcUrl: string }>(
  "gateway: the RPC doors read only what the facade would",
);

/**
 * What a refusal or a capped read may move the gateway's peak memory by; inflating the bodies sent
 * here would take hundreds of MiB.
 */
const QUIET_MIB = 16;
const GET_CURRENT_KEY = "/gateway.v1.KeysService/GetCurrentKey";
const CHAT_STREAM = "/gateway.v1.InferenceService/CreateChatCompletion";
const UPLOAD_FILE = "/gateway.v1.FilesService/UploadFile";
const GRPC = { "content-type": "application/grpc", te: "trailers" };
/** 1 GiB of spaces, about 1 MB on the wire. */
const BOMB = gzipBomb(1024);
/** 512 MiB of spaces: under GetCurrentKey's 1 MiB as sent, far over it inflated. */
const HALF_BOMB = gzipBomb(512);

doors.before(async (ctx) => {
  ctx.key = newKeySecret();
  ctx.gw = await startGatewayProcess({ databaseUrl: await createDatabase(), key: ctx.key });
  ctx.grpcUrl = `http://127.0.0.1:${ctx.gw.grpcPort}`;
  // The paths the calls below take, warmed once: their first use allocates what every later one reuses.
  await h1Request(
    ctx.gw.url,
    GET_CURRENT_KEY,
    { "content-type": "application/json", authorization: `Bearer ${ctx.key}` },
    Buffer.from("{}"),
  );
  await h2Request(ctx.grpcUrl, GET_CURRENT_KEY, GRPC, envelope(Buffer.alloc(0)));
});
doors.after(async (ctx) => {
  await ctx.gw?.stop();
});

/** The call, and how far it moved the gateway's peak memory. */
async function measured(
  gw: GatewayProcess,
  send: () => Promise<WireReply>,
): Promise<{ reply: WireReply; growthMiB: number }> {
  let reply: WireReply | undefined;
  const growthMiB = await peakRssGrowthMiB(gw.child.pid!, async () => void (reply = await send()));
  return { reply: reply!, growthMiB };
}

doors(
  "no key: 1 GiB gzipped is refused from the headers in every protocol, on both ports, nothing inflated",
  async ({ gw, grpcUrl }) => {
    const cases: Array<{ name: string; send: () => Promise<WireReply>; refused: (reply: WireReply) => boolean }> = [
      {
        name: "Connect unary, HTTP port",
        send: () =>
          h1Request(gw.url, GET_CURRENT_KEY, { "content-type": "application/json", "content-encoding": "gzip" }, BOMB),
        refused: (r) => r.status === 401 && JSON.parse(r.body.toString()).code === "unauthenticated",
      },
      {
        name: "Connect streaming, HTTP port",
        send: () =>
          h1Request(
            gw.url,
            CHAT_STREAM,
            { "content-type": "application/connect+json", "connect-content-encoding": "gzip" },
            envelope(BOMB, 1),
          ),
        refused: (r) => r.status === 200 && r.body.toString().includes('"code":"unauthenticated"'),
      },
      {
        name: "gRPC-Web, HTTP port",
        send: () =>
          h1Request(
            gw.url,
            GET_CURRENT_KEY,
            { "content-type": "application/grpc-web+proto", "grpc-encoding": "gzip" },
            envelope(BOMB, 1),
          ),
        refused: (r) => grpcStatusOf(r) === "16",
      },
      {
        name: "gRPC, h2c port",
        send: () => h2Request(grpcUrl, GET_CURRENT_KEY, { ...GRPC, "grpc-encoding": "gzip" }, envelope(BOMB, 1)),
        refused: (r) => grpcStatusOf(r) === "16",
      },
      {
        name: "Connect unary, h2c port",
        send: () =>
          h2Request(grpcUrl, GET_CURRENT_KEY, { "content-type": "application/json", "content-encoding": "gzip" }, BOMB),
        refused: (r) => r.status === 401,
      },
    ];
    for (const { name, send, refused } of cases) {
      const { reply, growthMiB } = await measured(gw, send);
      assert.ok(
        refused(reply),
        `${name}: ${reply.status} ${JSON.stringify(reply.headers)} ${reply.body.subarray(0, 300).toString()}`,
      );
      assert.ok(growthMiB < QUIET_MIB, `${name}: the gateway's peak memory rose by ${growthMiB.toFixed(1)} MiB`);
    }
  },
);

doors("the refusal is the core's own: its message, and the call's request id", async ({ gw, grpcUrl }) => {
  const missing = await h1Request(
    gw.url,
    GET_CURRENT_KEY,
    { "content-type": "application/json", "content-encoding": "gzip", "x-request-id": "door-401" },
    BOMB,
  );
  assert.is(missing.status, 401);
  assert.is(missing.headers["x-request-id"], "door-401");
  assert.match(JSON.parse(missing.body.toString()).message, /Missing or malformed Authorization header/);
  const unknown = await h2Request(
    grpcUrl,
    GET_CURRENT_KEY,
    { ...GRPC, "grpc-encoding": "gzip", authorization: "Bearer sk-gw-v1-not-a-real-key" },
    envelope(BOMB, 1),
  );
  assert.is(grpcStatusOf(unknown), "16");
  assert.is(
    decodeURIComponent(unknown.trailers["grpc-message"] ?? unknown.headers["grpc-message"] ?? ""),
    "Invalid API key",
  );
});

doors("a valid key: a body over the method's limit is resource_exhausted", async ({ gw, grpcUrl, key }) => {
  const authorization = `Bearer ${key}`;
  // GetCurrentKey sets no limit of its own: the facade's 1 MiB.
  const tooBig = Buffer.alloc(2 * 1024 * 1024, " ");
  const connect = await h1Request(
    gw.url,
    GET_CURRENT_KEY,
    { "content-type": "application/json", authorization },
    tooBig,
  );
  assert.is(JSON.parse(connect.body.toString()).code, "resource_exhausted", connect.body.toString());
  const grpc = await h2Request(grpcUrl, GET_CURRENT_KEY, { ...GRPC, authorization }, envelope(tooBig));
  assert.is(grpcStatusOf(grpc), "8");
});

doors(
  "a valid key: a gzip bomb under the limit as sent is refused once inflated past it, never inflated whole",
  async ({ gw, grpcUrl, key }) => {
    const authorization = `Bearer ${key}`;
    const connect = await measured(gw, () =>
      h1Request(
        gw.url,
        GET_CURRENT_KEY,
        { "content-type": "application/json", "content-encoding": "gzip", authorization },
        HALF_BOMB,
      ),
    );
    assert.is(JSON.parse(connect.reply.body.toString()).code, "resource_exhausted", connect.reply.body.toString());
    assert.ok(
      connect.growthMiB < QUIET_MIB,
      `Connect: the gateway's peak memory rose by ${connect.growthMiB.toFixed(1)} MiB`,
    );
    const grpc = await measured(gw, () =>
      h2Request(grpcUrl, GET_CURRENT_KEY, { ...GRPC, "grpc-encoding": "gzip", authorization }, envelope(HALF_BOMB, 1)),
    );
    assert.is(grpcStatusOf(grpc.reply), "8");
    assert.ok(grpc.growthMiB < QUIET_MIB, `gRPC: the gateway's peak memory rose by ${grpc.growthMiB.toFixed(1)} MiB`);
  },
);

doors(
  "a client-streaming upload keeps its method's own limit, per message: a 2 MiB chunk is taken",
  async ({ grpcUrl, key }) => {
    const message = (part: MessageInitShape<typeof UploadFileRequestSchema>) =>
      envelope(Buffer.from(toBinary(UploadFileRequestSchema, create(UploadFileRequestSchema, part))));
    const body = Buffer.concat([
      message({ part: { case: "metadata", value: { filename: "spaces.txt", contentType: "text/plain" } } }),
      message({ part: { case: "chunk", value: Buffer.alloc(2 * 1024 * 1024, " ") } }),
    ]);
    const reply = await h2Request(grpcUrl, UPLOAD_FILE, { ...GRPC, authorization: `Bearer ${key}` }, body);
    assert.is(grpcStatusOf(reply), "0", decodeURIComponent(reply.trailers["grpc-message"] ?? ""));
  },
);

doors("an HTTP/1.0 call without Host is answered 400, and the gateway lives on", async ({ gw }) => {
  // connect-node's adapter throws from the request listener when it cannot make the call's URL.
  const socket = await rawSocket(gw.url);
  socket.write(`POST ${GET_CURRENT_KEY} HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`);
  await eventually(() => socket.closed, "the answer is complete");
  assert.match(socket.received(), /^HTTP\/1\.1 400 /);
  const health = await rawSocket(gw.url);
  health.write(`GET /healthz HTTP/1.1\r\nhost: ${new URL(gw.url).host}\r\n\r\n`);
  await eventually(() => health.received().includes('"ok"'), "the gateway still answers");
  health.destroy();
});

doors.run();

const timeouts = suite<{ gw: TestGateway }>("gateway: the listeners' time limits");

timeouts.before(async (ctx) => {
  ctx.gw = await startTestGateway({
    GATEWAY_HTTP_HEADERS_TIMEOUT_MS: "300",
    GATEWAY_HTTP_KEEP_ALIVE_TIMEOUT_MS: "1000",
    GATEWAY_GRPC_IDLE_TIMEOUT_MS: "300",
    GATEWAY_GRPC_MAX_CONCURRENT_STREAMS: "2",
  });
});
timeouts.after(async (ctx) => {
  await ctx.gw?.stop();
});

timeouts("headers that never end are cut off: 408, connection closed", async ({ gw }) => {
  const socket = await rawSocket(gw.url);
  socket.write(`GET /healthz HTTP/1.1\r\nhost: ${new URL(gw.url).host}\r\nx-slow: `);
  await eventually(() => socket.closed, "the gateway closes the connection");
  assert.match(socket.received(), /^HTTP\/1\.1 408 /);
});

timeouts("an idle keep-alive connection is closed, after a head that says how long it is kept", async ({ gw }) => {
  const socket = await rawSocket(gw.url);
  socket.write(`GET /healthz HTTP/1.1\r\nhost: ${new URL(gw.url).host}\r\n\r\n`);
  await eventually(() => socket.received().includes('"ok"'), "the answer arrives");
  assert.match(socket.received(), /^HTTP\/1\.1 200 /);
  assert.match(socket.received(), /\r\nkeep-alive: timeout=1\r\n/i);
  await eventually(() => socket.closed, "the gateway closes the idle connection");
});

timeouts("an HTTP/2 session without streams is closed", async ({ gw }) => {
  const session = http2.connect(gw.grpcUrl);
  let closed = false;
  session.on("error", () => undefined);
  session.once("close", () => (closed = true));
  await eventually(() => closed, "the gateway closes the idle session");
});

timeouts("an HTTP/2 session's streams beyond the cap are refused; the others are served", async ({ gw }) => {
  const session = http2.connect(gw.grpcUrl);
  session.on("error", () => undefined);
  try {
    // Opened at once, before the gateway's SETTINGS arrive: the client cannot hold the third back.
    const streams = [0, 1, 2].map(() => {
      const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", ...GRPC });
      const state = { stream, closed: false, grpcStatus: undefined as string | undefined };
      stream.on("error", () => undefined);
      stream.on("response", (h) => (state.grpcStatus ??= h["grpc-status"]?.toString()));
      stream.on("trailers", (t) => (state.grpcStatus = t["grpc-status"]?.toString()));
      stream.resume();
      stream.once("close", () => (state.closed = true));
      return state;
    });
    const refused = await eventually(() => streams.filter((s) => s.closed), "a stream is refused", {
      until: (closed) => closed.length > 0,
    });
    assert.equal(
      refused.map((s) => s.stream.rstCode),
      [http2.constants.NGHTTP2_REFUSED_STREAM],
    );
    const served = streams.filter((s) => !s.closed);
    for (const { stream } of served) stream.end(envelope(Buffer.alloc(0)));
    await eventually(() => served.every((s) => s.closed), "the others are answered");
    assert.equal(
      served.map((s) => s.grpcStatus),
      ["0", "0"],
    );
  } finally {
    session.destroy();
  }
});

timeouts.run();

const caps = suite<{ gw: TestGateway }>("gateway: the connection cap of each port");

caps.before(async (ctx) => {
  ctx.gw = await startTestGateway({ GATEWAY_MAX_CONNECTIONS: "2" });
});
caps.after(async (ctx) => {
  await ctx.gw?.stop();
});

caps(
  "the HTTP port: a connection over the cap is closed unanswered; once one closes, the next is served",
  async ({ gw }) => {
    const host = new URL(gw.url).host;
    const request = `GET /healthz HTTP/1.1\r\nhost: ${host}\r\n\r\n`;
    const held = [await rawSocket(gw.url), await rawSocket(gw.url)];
    for (const socket of held) {
      socket.write(request);
      await eventually(() => socket.received().includes('"ok"'), "a connection within the cap is served");
    }
    const over = await rawSocket(gw.url);
    over.write(request);
    await eventually(() => over.closed, "the connection over the cap is closed");
    assert.is(over.received(), "");
    held[0]!.destroy();
    await eventually(async () => {
      const next = await rawSocket(gw.url);
      next.write(request);
      await eventually(() => next.closed || next.received().includes('"ok"'), "an answer or a close");
      next.destroy();
      return next.received().includes('"ok"');
    }, "a new connection is served once one has closed");
    held[1]!.destroy();
  },
);

caps(
  "the gRPC port: a session over the cap is closed unanswered; once one closes, the next is served",
  async ({ gw }) => {
    const check = (session: http2.ClientHttp2Session) => healthCheck(session);
    const held = [http2.connect(gw.grpcUrl), http2.connect(gw.grpcUrl)];
    for (const session of held) {
      session.on("error", () => undefined);
      assert.is(await check(session), "0");
    }
    const over = http2.connect(gw.grpcUrl);
    over.on("error", () => undefined);
    assert.is(await check(over), undefined);
    over.destroy();
    held[0]!.destroy();
    await eventually(async () => {
      const next = http2.connect(gw.grpcUrl);
      next.on("error", () => undefined);
      const status = await check(next);
      next.destroy();
      return status === "0";
    }, "a new session is served once one has closed");
    held[1]!.destroy();
  },
);

caps.run();

const backlog = suite<{ gw: TestGateway }>("gateway: the accept queue of each port");

backlog.before(async (ctx) => {
  ctx.gw = await startTestGateway({ GATEWAY_LISTEN_BACKLOG: "777" });
});
backlog.after(async (ctx) => {
  await ctx.gw?.stop();
});

backlog(
  "both ports listen with GATEWAY_LISTEN_BACKLOG as their queue (ss shows it as a listener's Send-Q)",
  async ({ gw }) => {
    for (const url of [gw.url, gw.grpcUrl]) {
      const port = new URL(url).port;
      const { stdout } = await run("ss", ["-Hlnt", `sport = :${port}`]);
      const [, , sendQ] = stdout.trim().split(/\s+/);
      assert.is(sendQ, "777", `the listener on port ${port}: ${stdout}`);
    }
  },
);

backlog("the default queue holds a burst of thousands, and a backlog out of range is refused by name", () => {
  assert.is(loadConfig({}).listeners.listenBacklog, 4_096);
  assert.throws(() => loadConfig({ GATEWAY_LISTEN_BACKLOG: "0" }), /GATEWAY_LISTEN_BACKLOG must be an integer/);
});

backlog.run();

/** A health check on this session: its grpc-status, or undefined when the stream or session ended without one. */
function healthCheck(session: http2.ClientHttp2Session): Promise<string | undefined> {
  return new Promise((resolve) => {
    let status: string | undefined;
    const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", ...GRPC });
    stream.on("error", () => undefined);
    stream.on("response", (h) => (status ??= h["grpc-status"]?.toString()));
    stream.on("trailers", (t) => (status = t["grpc-status"]?.toString()));
    stream.resume();
    stream.once("close", () => resolve(status));
    stream.end(envelope(Buffer.alloc(0)));
  });
}

interface RawSocket {
  write(data: string): void;
  received(): string;
  readonly closed: boolean;
  destroy(): void;
}

/** A TCP connection to the HTTP port that records what arrives and whether the gateway closed it. */
async function rawSocket(base: string): Promise<RawSocket> {
  const { hostname, port } = new URL(base);
  const socket = net.connect({ host: hostname, port: Number(port) });
  let text = "";
  let closed = false;
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  socket.once("close", () => (closed = true));
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return {
    write: (data) => void socket.write(data),
    received: () => text,
    get closed() {
      return closed;
    },
    destroy: () => socket.destroy(),
  };
}

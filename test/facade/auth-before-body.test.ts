import net from "node:net";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../support/eventually.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call, rawRequest } from "../support/http.js";

/**
 * The facade authenticates before it reads anything the caller sent: without a valid
 * key, a bad body, a wrong-typed query value or a `..` segment is a 401, and a body is not read at
 * all; a request answered before its body was read through (401, 413) says `connection: close` and keeps reading until
 * the client has sent it, so the client reliably reads the answer (RFC 9112 §9.6).
 */
const test = suite<{ gw: TestGateway }>("facade: authentication before the body");

test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const MISSING = "Missing or malformed Authorization header; expected 'Bearer <API key>'";

test("no key: a malformed body, a wrong-typed query value and a '..' segment are all 401", async ({ gw }) => {
  const cases = [
    await rawRequest(gw.url, "POST", "/api/v1/keys", { body: "{not json" }),
    await rawRequest(gw.url, "GET", "/api/v1/keys?offset=abc"),
    // Sent as is (fetch would resolve the dot segment away).
    await rawRequest(gw.url, "GET", "/api/v1/workspaces/.."),
    await rawRequest(gw.url, "GET", "/api/v1/workspaces/%zz"),
    await rawRequest(gw.url, "POST", "/api/v1/chat/completions", { body: '{"model": 5' }),
  ];
  for (const reply of cases) {
    assert.is(reply.status, 401, JSON.stringify(reply.body));
    // Chat completions add OpenAI's `type` beside them (openai-surface.test.ts).
    assert.equal([at(reply.body, "error", "code"), at(reply.body, "error", "message")], [401, MISSING]);
  }
});

test("an unknown key with a malformed body is 401 Invalid API key, not a 400 about the body", async ({ gw }) => {
  const reply = await call(gw.url, "POST", "/api/v1/keys", { key: "sk-gw-v1-not-a-real-key", raw: "{not json" });
  assert.is(reply.status, 401);
  assert.is(at(reply.body, "error", "message"), "Invalid API key");
});

test("a valid key still gets the 400 that names the problem", async ({ gw }) => {
  const reply = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, raw: "{not json" });
  assert.is(reply.status, 400);
  assert.match(String(at(reply.body, "error", "message")), /Malformed JSON body/);
  const path = await rawRequest(gw.url, "GET", "/api/v1/workspaces/%zz", { key: gw.key });
  assert.equal(
    [path.status, at(path.body, "error", "message")],
    [400, "Malformed percent-encoding in the request path"],
  );
});

test("a path that is neither a route nor an RPC gets the JSON 404 envelope", async ({ gw }) => {
  for (const path of ["//api/v1/key", "/", "/nothing/here"]) {
    const reply = await rawRequest(gw.url, "GET", path, { key: gw.key });
    assert.is(reply.status, 404, path);
    assert.is(at(reply.body, "error", "code"), 404, path);
  }
});

test("a key disabled after the facade has seen it is refused at once: the core checks every call", async ({ gw }) => {
  const created = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "soon disabled" } });
  const key = String(at(created.body, "key"));
  const hash = String(at(created.body, "data", "hash"));
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key })).status, 200);
  assert.is(
    (await call(gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: gw.key, body: { disabled: true } })).status,
    200,
  );
  const refused = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(refused.status, 401);
  assert.is(at(refused.body, "error", "message"), "API key is disabled");
});

test("a public route answers without a key", async ({ gw }) => {
  assert.is((await call(gw.url, "GET", "/api/v1/videos/models")).status, 200);
});

test("no key and a huge declared body that never comes: 401 at once, nothing waited for", async ({ gw }) => {
  const reply = await exchange(
    gw.url,
    "POST /api/v1/keys",
    { "content-length": String(100 * 1024 * 1024) },
    [Buffer.from("{")],
    { stopAfterHead: true },
  );
  assert.is(reply.status, 401);
});

test("401 before the body: a client that sends its whole body reads the answer, then the server closes", async ({
  gw,
}) => {
  const body = Buffer.alloc(4 * 1024 * 1024, "x");
  const reply = await exchange(gw.url, "POST /api/v1/keys", { "content-length": String(body.length) }, chunks(body));
  assert.is(reply.writeError, undefined);
  assert.is(reply.status, 401);
  assert.match(reply.head, /\r\nconnection: close\r\n/i);
  assert.ok(reply.closedByServer);
});

test("413 over the limit: the client sending its whole body reads the 413, then the server closes", async ({ gw }) => {
  // /keys takes at most 1 MiB (the default); 3 MiB, sent in full as a client would.
  const body = Buffer.alloc(3 * 1024 * 1024, "x");
  for (const declared of [true, false]) {
    const head: Record<string, string> = {
      authorization: `Bearer ${gw.key}`,
      ...(declared ? { "content-length": String(body.length) } : { "transfer-encoding": "chunked" }),
    };
    const reply = await exchange(gw.url, "POST /api/v1/keys", head, chunks(body), { chunked: !declared });
    assert.is(reply.writeError, undefined, `declared=${declared}`);
    assert.is(reply.status, 413, `declared=${declared}`);
    assert.is(at(JSON.parse(reply.body), "error", "code"), 413);
    assert.ok(reply.closedByServer, `declared=${declared}`);
  }
});

function chunks(body: Buffer, size = 64 * 1024): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

interface Exchange {
  status: number;
  head: string;
  body: string;
  writeError: string | undefined;
  /** The server ended the connection after the answer. */
  closedByServer: boolean;
}

/**
 * One request over a raw socket, written as fast as the socket takes it. Nothing here gives up
 * writing when an answer arrives early, as many clients do not: the point is whether the gateway
 * lets them finish and read the answer.
 */
async function exchange(
  base: string,
  requestLine: string,
  headers: Record<string, string>,
  body: Buffer[],
  options: { chunked?: boolean; stopAfterHead?: boolean } = {},
): Promise<Exchange> {
  const { hostname, port } = new URL(base);
  // Half-open allowed, as HTTP clients that send their whole request before reading behave: the
  // server's early FIN does not stop the upload; a reset would.
  const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  let received = "";
  let writeError: string | undefined;
  socket.on("data", (data: Buffer) => (received += data.toString("latin1")));
  socket.on("error", (err: NodeJS.ErrnoException) => (writeError ??= err.code ?? err.message));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const head = Object.entries({ host: `${hostname}:${port}`, "content-type": "application/json", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  const [verb, path] = requestLine.split(" ");
  const write = (data: Buffer | string) => new Promise<void>((resolve) => socket.write(data, () => resolve()));
  await write(`${verb} ${path} HTTP/1.1\r\n${head}\r\n`);
  for (const chunk of body) {
    if (socket.destroyed) break;
    await write(
      options.chunked
        ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")])
        : chunk,
    );
    if (options.stopAfterHead) break;
  }
  if (options.chunked && !socket.destroyed) await write("0\r\n\r\n");
  const first = await responseIn(() => received, closed);
  let closedByServer = false;
  if (!options.stopAfterHead) {
    // Our side is done; the server, lingering until then, closes the connection.
    socket.end();
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    // The close is awaited, not given a few seconds: a busy machine may take them.
    closedByServer = await eventually(() => isClosed, "the server closes the connection").then(
      () => true,
      () => false,
    );
  }
  socket.destroy();
  const split = first.indexOf("\r\n\r\n") + 4;
  return { status: statusOf(first), head: first.slice(0, split), body: first.slice(split), writeError, closedByServer };
}

/**
 * The first complete response (head and Content-Length body) in what has arrived, or what there is
 * once the socket closes.
 */
async function responseIn(received: () => string, closed: Promise<void>): Promise<string> {
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  const complete = (text: string): string | undefined => {
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const length = Number(/content-length:\s*(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
    return text.length >= end + 4 + length ? text.slice(0, end + 4 + length) : undefined;
  };
  const seen = await eventually(
    () => ({ text: received(), closed: isClosed }),
    "a whole response arrives or the socket closes",
    { until: (now) => complete(now.text) !== undefined || now.closed },
  );
  return complete(seen.text) ?? seen.text;
}

function statusOf(response: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
}

test.run();

import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { pdf } from "../../support/file-samples.js";
import { downloadFile, uploadFile } from "../../support/file-uploads.js";
import { abandonOnceUpstream } from "../../support/abandoned-call.js";
import { at, call, type CallOptions, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { startRemoteFacade, type RemoteFacade } from "../../support/remote-facade.js";
import { sseData } from "../../support/sse.js";

/**
 * The direct in-process transport (server/platform/rpc/direct-transport.ts) against the remote path, which
 * is the oracle: one gateway, whose own REST facade calls its core in-process, and a second facade
 * in this process calling the same core over gRPC. The same requests through both must answer the
 * same status, headers (but the connection's own) and body; where a write makes ids and timestamps
 * differ, those alone are normalized.
 */
interface Context {
  env: InferenceGateway;
  remote: RemoteFacade;
  dataDir: string;
  /** A non-management key of the default workspace. */
  plainKey: string;
}

const test = suite<Context>("transport parity: direct in-process vs remote gRPC");
test.before(async (ctx) => {
  ctx.dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-parity-"));
  ctx.env = await startInferenceGateway({ GATEWAY_DATA_DIR: ctx.dataDir });
  ctx.remote = await startRemoteFacade(Number(new URL(ctx.env.gw.grpcUrl).port));
  const plain = await call(ctx.env.gw.url, "POST", "/api/v1/keys", {
    key: ctx.env.gw.key,
    body: { name: "parity plain" },
  });
  assert.is(plain.status, 201, plain.text);
  ctx.plainKey = String(at(plain.body, "key"));
});
test.after(async (ctx) => {
  await ctx.remote?.close();
  await ctx.env?.stop();
  if (ctx.dataDir) await fs.rm(ctx.dataDir, { recursive: true, force: true });
});
test.before.each(({ env }) => env.upstream.reset());

/** What differs between two connections, not between two transports. */
const CONNECTION_HEADERS = new Set(["date", "keep-alive", "connection"]);
/** Durations the gateway reports (e.g. `x-gateway-upstream-ms`): present on both sides, never equal. */
const TIMING_HEADER = /^x-gateway-[a-z-]+-ms$/;
/** What is left of a rate limit and when its window ends differ from one call to the next (docs/api/limits.md). */
const RATE_LIMIT_STATE_HEADER = /^x-ratelimit-(remaining|reset)-/;
/**
 * Each answer names its own request (a fresh id each;
 * test/platform/observability/request-ids.test.ts checks the echo).
 */
const REQUEST_ID_HEADER = "x-request-id";

type Normalize = (body: unknown) => unknown;

interface Comparable {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function comparable(reply: { status: number; headers: Headers; body: unknown }, normalize?: Normalize): Comparable {
  const headers: Record<string, string> = {};
  reply.headers.forEach((value, name) => {
    if (CONNECTION_HEADERS.has(name)) return;
    // A normalized body may differ in length (ids, slugs) before normalization.
    if (normalize && name === "content-length") return;
    headers[name] = TIMING_HEADER.test(name)
      ? "<ms>"
      : name === REQUEST_ID_HEADER
        ? "<request id>"
        : RATE_LIMIT_STATE_HEADER.test(name)
          ? "<rate limit state>"
          : value;
  });
  return { status: reply.status, headers, body: normalize ? normalize(reply.body) : reply.body };
}

function assertSame(what: string, direct: Reply, remote: Reply, normalize?: Normalize): void {
  assert.equal(comparable(direct, normalize), comparable(remote, normalize), what);
}

/** The same request through both facades. */
async function both(
  ctx: Context,
  method: string,
  route: string,
  options: CallOptions = {},
): Promise<{ direct: Reply; remote: Reply }> {
  const direct = await call(ctx.env.gw.url, method, route, options);
  const remote = await call(ctx.remote.url, method, route, options);
  return { direct, remote };
}

/** Replaces the values of these fields, at any depth, by their name. */
function without(...fields: string[]): Normalize {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, fields.includes(key) ? `<${key}>` : strip(inner)]),
    );
  };
  return strip;
}

const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";

test("reads: the current key, lists and gets of workspaces and keys", async (ctx) => {
  const { key } = ctx.env.gw;
  const workspaces = await both(ctx, "GET", "/api/v1/workspaces", { key });
  assertSame("GET /workspaces", workspaces.direct, workspaces.remote);
  const workspaceId = String(at(workspaces.direct.body, "data", 0, "id"));
  const keys = await both(ctx, "GET", "/api/v1/keys", { key });
  assertSame("GET /keys", keys.direct, keys.remote);
  const hash = String(at(keys.direct.body, "data", 0, "hash"));

  for (const [route, options] of [
    ["/api/v1/key", { key }],
    ["/api/v1/key", { key: ctx.plainKey }],
    [`/api/v1/workspaces/${workspaceId}`, { key }],
    ["/api/v1/workspaces?limit=1", { key }],
    [`/api/v1/keys/${hash}`, { key }],
    ["/api/v1/keys?offset=1", { key }],
  ] as const) {
    const { direct, remote } = await both(ctx, "GET", route, options);
    assert.is(direct.status, 200, `${route}: ${direct.text}`);
    assertSame(`GET ${route}`, direct, remote);
  }
});

test("writes: a create through each answers the same but for its id, slug and times", async (ctx) => {
  const { key } = ctx.env.gw;
  const direct = await call(ctx.env.gw.url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "Parity", slug: "parity-direct" },
  });
  const remote = await call(ctx.remote.url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "Parity", slug: "parity-remote" },
  });
  assert.is(direct.status, 201, direct.text);
  // Each workspace is created with a default guardrail of its own.
  assertSame(
    "POST /workspaces",
    direct,
    remote,
    without("id", "slug", "created_at", "updated_at", "default_guardrail_id"),
  );

  const duplicate = await both(ctx, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "Again", slug: "parity-direct" },
  });
  assert.is(duplicate.direct.status, 409, duplicate.direct.text);
  assertSame("a duplicate slug", duplicate.direct, duplicate.remote);
});

test("errors: 400s naming the field, 404, 401, 403, 405 and the facade's own 404", async (ctx) => {
  const { key } = ctx.env.gw;
  const cases: Array<[string, string, CallOptions, number]> = [
    ["POST", "/api/v1/workspaces", { key, body: { name: "Bad", slug: "Bad Slug" } }, 400],
    ["POST", "/api/v1/workspaces", { key, body: { name: 12, slug: "typed" } }, 400],
    ["POST", "/api/v1/workspaces", { key, raw: "{not json" }, 400],
    ["POST", "/api/v1/keys", { key, body: { name: "" } }, 400],
    ["GET", `/api/v1/workspaces/${UNKNOWN_UUID}`, { key }, 404],
    ["GET", `/api/v1/keys/${"0".repeat(64)}`, { key }, 404],
    ["GET", "/api/v1/key", {}, 401],
    ["GET", "/api/v1/key", { key: "sk-gw-v1-not-a-key" }, 401],
    ["POST", "/api/v1/workspaces", { key: ctx.plainKey, body: { name: "x", slug: "plain-x" } }, 403],
    ["GET", "/api/v1/keys", { key: ctx.plainKey }, 403],
    ["PUT", "/api/v1/key", { key }, 405],
    ["GET", "/api/v1/no-such-route", { key }, 404],
  ];
  for (const [method, route, options, status] of cases) {
    const { direct, remote } = await both(ctx, method, route, options);
    assert.is(direct.status, status, `${method} ${route}: ${direct.text}`);
    assertSame(`${method} ${route}`, direct, remote);
  }
  const badSlug = await call(ctx.env.gw.url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "Bad", slug: "Bad Slug" },
  });
  assert.match(String(at(badSlug.body, "error", "message")), /slug/);
});

const HELLO = [{ role: "user", content: "Hi there" }];
const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: "mock/chat",
  messages: HELLO,
  provider: { only: ["mockai"] },
  ...extra,
});
/** Each call is a generation of its own. */
const perCall = without("id", "created");

test("chat completions: non-streamed JSON and a streamed SSE answer", async (ctx) => {
  const { key } = ctx.env.gw;
  const plain = await both(ctx, "POST", "/api/v1/chat/completions", { key, body: chatBody() });
  assert.is(plain.direct.status, 200, plain.direct.text);
  assert.is(at(plain.direct.body, "object"), "chat.completion");
  assertSame("a non-streamed completion", plain.direct, plain.remote, perCall);

  const streamed = await both(ctx, "POST", "/api/v1/chat/completions", { key, body: chatBody({ stream: true }) });
  assert.is(streamed.direct.status, 200, streamed.direct.text);
  assert.match(streamed.direct.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = (reply: Reply) => ({ ...reply, body: perCall(sseData(reply.text)) });
  const direct = events(streamed.direct);
  assert.ok((direct.body as unknown[]).length >= 3, streamed.direct.text);
  assert.is((direct.body as unknown[]).at(-1), "[DONE]");
  assertSame("a streamed completion", direct, events(streamed.remote));
});

test("an upstream 429 with Retry-After reaches both callers with retry-after, streamed or not", async (ctx) => {
  const { key } = ctx.env.gw;
  for (const stream of [false, true]) {
    ctx.env.upstream.rule({ model: "chat-a", status: 429, retryAfter: 7, times: 2 });
    const { direct, remote } = await both(ctx, "POST", "/api/v1/chat/completions", { key, body: chatBody({ stream }) });
    assert.is(direct.status, 429, direct.text);
    assert.is(direct.headers.get("retry-after"), "7");
    assertSame(`a limited ${stream ? "streamed " : ""}completion`, direct, remote);
  }
});

test("a multipart upload (client streaming), and its content back (a server stream with headers)", async (ctx) => {
  const { key } = ctx.env.gw;
  const direct = await uploadFile(ctx.env.gw.url, key, pdf(), { filename: "Parity für Q1.pdf" });
  const remote = await uploadFile(ctx.remote.url, key, pdf(), { filename: "Parity für Q1.pdf" });
  assert.is(direct.status, 201, direct.text);
  assertSame("POST /files", direct, remote, without("id", "created_at"));

  const id = String(at(direct.body, "id"));
  const metadata = await both(ctx, "GET", `/api/v1/files/${id}`, { key });
  assertSame("GET /files/{id}", metadata.direct, metadata.remote);
  const [directContent, remoteContent] = [
    await downloadFile(ctx.env.gw.url, key, id),
    await downloadFile(ctx.remote.url, key, id),
  ];
  assert.is(directContent.status, 200);
  assert.ok(directContent.headers.get("content-disposition"), "the handler's response header came through");
  assert.equal(
    comparable({ ...directContent, body: undefined }),
    comparable({ ...remoteContent, body: undefined }),
    "content headers",
  );
  assert.ok(directContent.bytes.equals(remoteContent.bytes));
  assert.ok(directContent.bytes.equals(pdf()));

  const unknown = await both(ctx, "GET", "/api/v1/files/file_000000000000000000000000/content", { key });
  assert.is(unknown.direct.status, 404, unknown.direct.text);
  assertSame("content of an unknown file", unknown.direct, unknown.remote);
});

test("a client that disconnects from a stream aborts the handler through the direct transport", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", hang: true, times: 1 });
  assert.is(await abandonOnceUpstream(env.upstream, env.gw.url, env.gw.key, chatBody({ stream: true })), "aborted");
  // The hang would last until the provider's 2 s timeout; the mock sees its request closed first.
  await env.upstream.waitForAbort(1500);

  const after = await call(env.gw.url, "POST", "/api/v1/chat/completions", { key: env.gw.key, body: chatBody() });
  assert.is(after.status, 200, after.text);
});

test.run();

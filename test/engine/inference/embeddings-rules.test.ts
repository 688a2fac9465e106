import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { mockVector } from "../../upstream/mock-upstream.js";

/** POST /embeddings over REST: every rule of proto/gateway/v1/inference.proto, refusing and allowing. */
const test = suite<{ env: InferenceGateway }>("embeddings rules");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

function embed(
  env: InferenceGateway,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/embeddings", {
    key: env.gw.key,
    body: { model: "mock/embed", input: "hello", ...body },
    headers,
  });
}

function assertError(res: Reply, status: number, message?: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status, res.text);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}

async function sessionOf(env: InferenceGateway, res: Reply): Promise<string | null> {
  assert.is(res.status, 200, res.text);
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.is(rows.length, 1);
  return rows[0]!.session_id;
}

test("input is required, with at least one item, none of them empty, all of one kind", async ({ env }) => {
  assertError(
    await call(env.gw.url, "POST", "/api/v1/embeddings", { key: env.gw.key, body: { model: "mock/embed" } }),
    400,
    /input/,
  );
  const bad: unknown[] = [
    "",
    [],
    [""],
    [[]],
    ["text", [1, 2]],
    [[1], "text"],
    [1, "text"],
    [1.5],
    [-1],
    [[1, -2]],
    7,
    { text: "x" },
    [null],
    ["a", { type: "text", text: "b" }],
  ];
  for (const input of bad) {
    const res = await embed(env, { input });
    assertError(res, 400, /input/);
    assert.ok(!res.text.includes(env.upstream.apiKey));
  }
  assert.is(env.upstream.requests.length, 0, "refused input never reaches the provider");
});

test("every accepted input form reaches the provider as given, one vector per item", async ({ env }) => {
  const forms: Array<[unknown, number]> = [
    ["hello", 1],
    [["a", "b", "c"], 3],
    [[5, 6], 1],
    [[[5], [6, 7]], 2],
  ];
  for (const [input, vectors] of forms) {
    const res = await embed(env, { input });
    assert.is(res.status, 200, res.text);
    assert.is((at(res.body, "data") as unknown[]).length, vectors);
    assert.equal(at(env.upstream.requests.at(-1)?.body, "input"), input);
  }
});

test("dimensions must be at least 1; a valid one is forwarded", async ({ env }) => {
  assertError(await embed(env, { dimensions: 0 }), 400, /dimensions/);
  assertError(await embed(env, { dimensions: -3 }), 400, /dimensions/);
  assert.is(env.upstream.requests.length, 0);
  const ok = await embed(env, { dimensions: 1 });
  assert.is(ok.status, 200, ok.text);
  assert.equal(at(ok.body, "data", 0, "embedding"), mockVector("hello", 1));
  assert.is(at(env.upstream.requests[0]?.body, "dimensions"), 1);
});

test("session_id: at most 256 characters, recorded in the ledger", async ({ env }) => {
  assertError(await embed(env, { session_id: "s".repeat(257) }), 400, /session_id/);
  const longest = "s".repeat(256);
  assert.is(await sessionOf(env, await embed(env, { session_id: longest })), longest);
  // Characters, not UTF-16 code units.
  const emoji = "😀".repeat(256);
  assert.is(await sessionOf(env, await embed(env, { session_id: emoji })), emoji);
  assertError(await embed(env, { session_id: `${emoji}😀` }), 400, /session_id/);
});

test("x-session-id is used when the body has no session_id; the body wins when both are sent", async ({ env }) => {
  assert.is(await sessionOf(env, await embed(env, {}, { "x-session-id": "from-header" })), "from-header");
  assert.is(
    await sessionOf(env, await embed(env, { session_id: "from-body" }, { "x-session-id": "from-header" })),
    "from-body",
  );
  assert.is(await sessionOf(env, await embed(env, {})), null);
});

test("x-session-id over 256 characters is refused; 256 is fine", async ({ env }) => {
  assertError(await embed(env, {}, { "x-session-id": "h".repeat(257) }), 400, /session/);
  const longest = "h".repeat(256);
  assert.is(await sessionOf(env, await embed(env, {}, { "x-session-id": longest })), longest);
});

test("user registers the end user; a malformed user is refused", async ({ env }) => {
  const before = await call(env.gw.url, "GET", "/api/v1/end-users/embed-user-1", { key: env.gw.key });
  assert.is(before.status, 404, before.text);
  const res = await embed(env, { user: "embed-user-1" });
  assert.is(res.status, 200, res.text);
  const registered = await call(env.gw.url, "GET", "/api/v1/end-users/embed-user-1", { key: env.gw.key });
  assert.is(registered.status, 200, registered.text);
  assert.is(at(registered.body, "data", "user"), "embed-user-1");
  assert.is(at(registered.body, "data", "is_active"), true);
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.is(rows[0]?.end_user, "embed-user-1");

  for (const user of [" leading-space", "trailing-space ", "", "nul\u0000inside", "u".repeat(513)]) {
    assertError(await embed(env, { user }), 400, /user/);
  }
  assert.is(env.upstream.requests.length, 1, "refused requests never reach the provider");
});

test("session_id and user never reach the provider", async ({ env }) => {
  const res = await embed(
    env,
    { session_id: "private-session", user: "private-user", trace: { trace_id: "private-trace" } },
    { "x-session-id": "header-session" },
  );
  assert.is(res.status, 200, res.text);
  const sent = env.upstream.requests[0]!;
  const body = sent.body as Record<string, unknown>;
  for (const field of Object.keys(body))
    assert.ok(["model", "input", "encoding_format"].includes(field), `${field} was sent upstream`);
  assert.is(sent.headers["x-session-id"], undefined);
  const raw = JSON.stringify(sent);
  for (const secret of ["private-session", "private-user", "header-session", "private-trace", env.gw.key])
    assert.ok(!raw.includes(secret), secret);
});

test("input_type is forwarded to the provider", async ({ env }) => {
  const res = await embed(env, { input_type: "search_query" });
  assert.is(res.status, 200, res.text);
  assert.is(at(env.upstream.requests[0]?.body, "input_type"), "search_query");
});

test("an unknown model and a chat model are refused with 400", async ({ env }) => {
  assertError(await embed(env, { model: "mock/nope" }), 400, /mock\/nope/);
  assertError(await embed(env, { model: "mock/chat" }), 400, /mock\/chat/);
  assertError(await embed(env, { model: "" }), 400, /model/);
  assert.is(env.upstream.requests.length, 0);
});

test("encoding_format float gives numbers, base64 the same values as little-endian float32", async ({ env }) => {
  const implicit = await embed(env, {});
  const float = await embed(env, { encoding_format: "float" });
  const base64 = await embed(env, { encoding_format: "base64" });
  for (const res of [implicit, float, base64]) assert.is(res.status, 200, res.text);
  const vector = mockVector("hello", 8);
  assert.equal(at(implicit.body, "data", 0, "embedding"), vector);
  assert.equal(at(float.body, "data", 0, "embedding"), vector);
  const encoded = at(base64.body, "data", 0, "embedding");
  assert.type(encoded, "string");
  const bytes = Buffer.from(encoded as string, "base64");
  assert.is(bytes.length, 4 * vector.length);
  assert.equal(
    Array.from({ length: vector.length }, (_, i) => bytes.readFloatLE(i * 4)),
    vector.map((n) => Math.fround(n)),
  );
  // The provider is always asked for floats; base64 is made by the gateway.
  for (const sent of env.upstream.requests)
    assert.ok(at(sent.body, "encoding_format") === undefined || at(sent.body, "encoding_format") === "float");
});

test("an unknown encoding_format is refused", async ({ env }) => {
  assertError(await embed(env, { encoding_format: "int8" }), 400, /encoding_format/);
  assert.is(env.upstream.requests.length, 0);
});

test("the success body has the API's shape", async ({ env }) => {
  const res = await embed(env, { input: ["a", "b"] });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "object"), "list");
  assert.match(String(at(res.body, "id")), /^gen-/);
  assert.is(at(res.body, "model"), "mock/embed");
  assert.equal(
    (at(res.body, "data") as unknown[]).map((d) => [at(d, "object"), at(d, "index")]),
    [
      ["embedding", 0],
      ["embedding", 1],
    ],
  );
  assert.is(at(res.body, "usage", "prompt_tokens"), 1);
  assert.is(at(res.body, "usage", "total_tokens"), 1);
});

test.run();

import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";
import { allLedgerRows, ledgerRowsOf } from "../support/ledger-rows.js";
import { sseData } from "../support/sse.js";

/**
 * The overall request deadline (GATEWAY_REQUEST_TIMEOUT_MS), shorter here than the providers'
 * own timeout (2000 ms), so that the deadline and not the provider timeout ends the calls: 504,
 * or an error event once a stream has begun, and an `error` ledger row.
 */
const test = suite<{ env: InferenceGateway }>("request deadline");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({ GATEWAY_REQUEST_TIMEOUT_MS: "300" });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const HELLO = [{ role: "user", content: "Hi there" }];

function chat(env: InferenceGateway, body: Record<string, unknown> = {}): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", { key: env.gw.key, body: { model: "mock/chat", messages: HELLO, ...body } });
}

function assert504(res: Reply): void {
  assert.is(res.status, 504, res.text);
  assert.equal(Object.keys(res.body as object), ["error"]);
  assert.is(at(res.body, "error", "code"), 504);
  assert.type(at(res.body, "error", "message"), "string");
}

test("a fast call is unaffected", async ({ env }) => {
  const res = await chat(env);
  assert.is(res.status, 200, res.text);
});

test("an upstream slower than the deadline → 504, and no fallback after it", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", delayMs: 1000, times: 1 });
  const res = await chat(env);
  assert504(res);
  assert.equal(env.upstream.requests.map((r) => r.model), ["chat-a"]);
  const rows = await allLedgerRows(env.gw);
  const row = rows[rows.length - 1]!;
  assert.equal([row.status, row.http_status, row.endpoint_id], ["error", 504, "mock/chat@mockai"]);
});

test("a streamed call whose headers come after the deadline → 504", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", delayMs: 1000, times: 1 });
  assert504(await chat(env, { stream: true }));
});

test("a stream still running at the deadline ends with a 504 error event and no [DONE]", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", chunkDelayMs: 200, times: 1 });
  const res = await chat(env, { stream: true });
  assert.is(res.status, 200, res.text);
  assert.not.match(res.text, /\[DONE\]/);
  const events = sseData(res.text);
  assert.ok(at(events[0], "choices") !== undefined, res.text);
  assert.is(at(events[events.length - 1], "error", "code"), 504, res.text);
  const id = String(at(events[0], "id"));
  const rows = await ledgerRowsOf(env.gw, id);
  assert.equal(rows.map((r) => [r.status, r.http_status]), [["error", 504]]);
});

test("embeddings slower than the deadline → 504", async ({ env }) => {
  env.upstream.rule({ model: "embed-a", delayMs: 1000, times: 1 });
  assert504(await call(env.gw.url, "POST", "/api/v1/embeddings", { key: env.gw.key, body: { model: "mock/embed", input: "x" } }));
});

test.run();

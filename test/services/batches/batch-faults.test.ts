import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { chatItems, FAST_ENGINE, itemCallsSeen, submit, waitTerminal } from "../../support/batches.js";
import { at, call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Upstream faults per item: retried with backoff (honouring Retry-After) while tries are left,
 * then recorded as the item's error; requests the provider refuses are not retried. A batch that
 * cannot run any more fails as a whole with the reason.
 */
const MAX_ATTEMPTS = 3;
const test = suite<{ env: InferenceGateway }>("batch upstream faults");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({ ...FAST_ENGINE, GATEWAY_BATCH_MAX_ATTEMPTS: String(MAX_ATTEMPTS) });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

/** One item on the mockai endpoint only (`chat-a`), so failures are retried, not fallen back from. */
async function runOne(env: InferenceGateway): Promise<{
  status: string;
  result: {
    response: { status_code: number } | null;
    error: { message: string; type: string; error_type: string } | null;
  };
}> {
  const accepted = await submit(env.gw.url, env.gw.key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    provider: { only: ["mockai"] },
    requests: chatItems(1),
  });
  assert.is(accepted.status, 202, accepted.text);
  const done = await waitTerminal(env.gw.url, env.gw.key, String(at(accepted.body, "id")));
  const [result] = at(done.body, "results") as never[];
  return { status: String(at(done.body, "status")), result: result! };
}

const upstreamCalls = (env: InferenceGateway) => itemCallsSeen(env.upstream);

test("5xx twice, then an answer: the item succeeds on its third try", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 500, times: 2 });
  const { status, result } = await runOne(env);
  assert.is(status, "completed");
  assert.is(result.error, null);
  assert.is(result.response?.status_code, 200);
  assert.is(upstreamCalls(env), 3);
});

test("429 with Retry-After on every try: the item ends with error_type rate_limit_exceeded", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 429, retryAfter: 1 });
  const { status, result } = await runOne(env);
  assert.is(status, "completed", "a batch completes when every item has a final result");
  assert.is(result.response, null);
  assert.is(result.error?.error_type, "rate_limit_exceeded");
  assert.is(result.error?.type, "rate_limit_error");
  assert.is(upstreamCalls(env), MAX_ATTEMPTS);
});

test("a request the provider rejects (400) is not retried", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 400 });
  const { result } = await runOne(env);
  assert.is(result.error?.type, "invalid_request_error");
  assert.match(result.error?.message ?? "", /rejected the request/);
  assert.is(upstreamCalls(env), 1);
});

test("a hanging provider times out (524) and the retry gets the answer", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const { result } = await runOne(env);
  assert.is(result.error, null);
  assert.is(result.response?.status_code, 200);
});

test("an answer holding U+0000 or a lone surrogate is stored with U+FFFD, and the batch completes", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", reply: "a\u0000b \ud800c" });
  const accepted = await submit(env.gw.url, env.gw.key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    provider: { only: ["mockai"] },
    requests: chatItems(1),
  });
  const done = await waitTerminal(env.gw.url, env.gw.key, String(at(accepted.body, "id")));
  assert.is(at(done.body, "status"), "completed");
  const [result] = at(done.body, "results") as never[];
  assert.is(at(result, "response", "body", "choices", 0, "message", "content"), "a\ufffdb \ufffdc");
});

test("a key disabled while its batch runs: the batch fails with the reason, finished items keep their results", async ({
  env,
}) => {
  const created = await call(env.gw.url, "POST", "/api/v1/keys", { key: env.gw.key, body: { name: "short-lived" } });
  const key = String(at(created.body, "key"));
  env.upstream.rule({ delayMs: 250 });
  const accepted = await submit(env.gw.url, key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(400),
  });
  const id = String(at(accepted.body, "id"));
  await call(env.gw.url, "PATCH", `/api/v1/keys/${String(at(created.body, "data", "hash"))}`, {
    key: env.gw.key,
    body: { disabled: true },
  });
  // Read with the workspace's other key: the batch is the workspace's, not only its key's.
  const done = await waitTerminal(env.gw.url, env.gw.key, id);
  assert.is(at(done.body, "status"), "failed", done.text.slice(0, 300));
  assert.match(String(at(done.body, "error", "message")), /disabled/);
  const counts = at(done.body, "request_counts") as { completed: number; failed: number; total: number };
  assert.is(counts.completed + counts.failed, 400);
  assert.ok(counts.failed > 0);
  const results = at(done.body, "results") as { error: { error_type: string } | null }[];
  assert.ok(results.some((r) => r.error?.error_type === "batch_failed"));
});

test.run();

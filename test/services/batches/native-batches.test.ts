import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { batchLedger, chatItems, FAST_ENGINE, submit, waitTerminal } from "../../support/batches.js";
import { eventually } from "../../support/eventually.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Batches routed to a provider with `native_batches`: submitted upstream as one provider batch,
 * polled there, and their results collected into the same settlement as local runs (one result
 * and one ledger row per finished item). `mockai` speaks OpenAI file batches, `mockanthropic`
 * Anthropic message batches.
 */
const test = suite<{ env: InferenceGateway }>("native provider batches");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway(
    { ...FAST_ENGINE, GATEWAY_BATCH_NATIVE_POLL_MS: "20" },
    { nativeBatches: ["mockai", "mockanthropic"] },
  );
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => {
  env.upstream.reset();
  env.upstream.batches.fault({});
});

interface ItemView {
  custom_id: string;
  response: { status_code: number; body: Record<string, unknown> } | null;
  error: { message: string; type: string; error_type: string } | null;
}

async function runBatch(
  env: InferenceGateway,
  body: Record<string, unknown>,
): Promise<{ id: string; done: Reply; results: ItemView[] }> {
  const accepted = await submit(env.gw.url, env.gw.key, body);
  assert.is(accepted.status, 202, accepted.text);
  const id = String(at(accepted.body, "id"));
  const done = await waitTerminal(env.gw.url, env.gw.key, id);
  return { id, done, results: (at(done.body, "results") ?? []) as ItemView[] };
}

const liveCalls = (env: InferenceGateway) =>
  env.upstream.requests.filter((r) => /\/(chat\/completions|messages)$/.test(r.path)).length;

test(
  "OpenAI file batch: " + "one provider batch, every item settled once, an item the provider rejected keeps its error",
  async ({ env }) => {
    env.upstream.batches.fault({
      inProgressPolls: 2,
      failItems: { bodyContains: "Question number 3", status: 400, message: "mock: bad item" },
    });
    const { id, done, results } = await runBatch(env, {
      endpoint: "/v1/chat/completions",
      model: "mock/chat",
      requests: chatItems(5),
    });
    assert.is(at(done.body, "status"), "completed");
    assert.is(env.upstream.batches.created, 1);
    assert.is(liveCalls(env), 0, "no item ran as a live call");
    assert.equal(at(done.body, "request_counts"), { total: 5, completed: 4, failed: 1 });
    assert.equal(
      results.map((r) => r.custom_id),
      ["item-0", "item-1", "item-2", "item-3", "item-4"],
    );
    const failed = results.find((r) => r.custom_id === "item-3")!;
    assert.is(failed.response, null);
    assert.is(failed.error?.type, "invalid_request_error");
    assert.match(failed.error?.message ?? "", /mock: bad item/);
    const ok = results.find((r) => r.custom_id === "item-0")!;
    assert.is(ok.response?.status_code, 200);
    assert.is(at(ok.response?.body, "object"), "chat.completion");
    assert.is(at(ok.response?.body, "model"), "mock/chat", "the model asked for, as on the live route");
    assert.is(at(ok.response?.body, "id"), `${id}-0`);

    const ledger = await batchLedger(env.gw.databaseUrl, id);
    assert.is(ledger.length, 5);
    assert.is(ledger.filter((row) => row.status === "success").length, 4);
    const billed = ledger.reduce((sum, row) => sum + Number(row.cost_usd), 0);
    assert.ok(billed > 0);
    assert.ok(
      Math.abs(Number(at(done.body, "usage", "cost")) - billed) < 1e-9,
      "usage.cost is the sum of the ledger rows",
    );
  },
);

test("Anthropic message batch: Messages-format items translated both ways", async ({ env }) => {
  const requests = [0, 1, 2].map((i) => ({
    custom_id: `m${i}`,
    body: { model: "mock/claude", max_tokens: 16, messages: [{ role: "user", content: `Question number ${i}` }] },
  }));
  const { done, results } = await runBatch(env, { endpoint: "/v1/messages", model: "mock/claude", requests });
  assert.is(at(done.body, "status"), "completed");
  assert.is(env.upstream.batches.created, 1);
  assert.is(liveCalls(env), 0);
  assert.equal(
    results.map((r) => r.custom_id),
    ["m0", "m1", "m2"],
  );
  for (const result of results) {
    assert.is(at(result.response?.body, "type"), "message");
    assert.is(at(result.response?.body, "role"), "assistant");
  }
  assert.ok(Number(at(done.body, "usage", "prompt_tokens")) > 0);
});

test("embeddings have no provider batch API: they run item by item", async ({ env }) => {
  const requests = [0, 1].map((i) => ({ custom_id: `e${i}`, body: { model: "mock/embed", input: `text ${i}` } }));
  const { done } = await runBatch(env, { endpoint: "/v1/embeddings", model: "mock/embed", requests });
  assert.is(at(done.body, "status"), "completed");
  assert.is(env.upstream.batches.created, 0);
});

test("a provider that refuses the submission for a while (503): submitted again later, then completes", async ({
  env,
}) => {
  env.upstream.batches.fault({ submitError: { status: 503, times: 2 } });
  const { done } = await runBatch(env, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(2),
  });
  assert.is(at(done.body, "status"), "completed");
  assert.is(env.upstream.batches.created, 1);
});

test("a provider that rejects the submission (400): the batch fails with the reason, items with it", async ({
  env,
}) => {
  env.upstream.batches.fault({ submitError: { status: 400 } });
  const { done, results } = await runBatch(env, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(2),
  });
  assert.is(at(done.body, "status"), "failed");
  assert.match(String(at(done.body, "error", "message")), /rejected/);
  assert.is(results.length, 2, "one result per item");
  assert.ok(results.every((r) => r.error?.error_type === "batch_failed"));
});

test("a provider batch that fails as a whole: the batch is failed with error.message", async ({ env }) => {
  env.upstream.batches.fault({ outcome: "failed" });
  const { id, done } = await runBatch(env, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(3),
  });
  assert.is(at(done.body, "status"), "failed");
  assert.match(String(at(done.body, "error", "message")), /MockAI failed the batch/);
  assert.is((await batchLedger(env.gw.databaseUrl, id)).length, 0, "nothing ran, nothing is billed");
});

test("a provider batch that expired: finished items keep their results and are billed, the rest expire", async ({
  env,
}) => {
  env.upstream.batches.fault({ outcome: "expired", finishedItems: 2 });
  const { id, done, results } = await runBatch(env, {
    endpoint: "/v1/chat/completions",
    model: "mock/claude",
    requests: chatItems(4, "mock/claude"),
  });
  assert.is(at(done.body, "status"), "expired");
  assert.is(results.filter((r) => r.response?.status_code === 200).length, 2);
  assert.is(results.filter((r) => r.error?.error_type === "batch_expired").length, 2);
  assert.is((await batchLedger(env.gw.databaseUrl, id)).length, 2);
});

test("cancel: the provider batch is cancelled there and the batch ends cancelled", async ({ env }) => {
  env.upstream.batches.fault({ inProgressPolls: Infinity });
  const accepted = await submit(env.gw.url, env.gw.key, {
    endpoint: "/v1/chat/completions",
    model: "mock/claude",
    requests: chatItems(3, "mock/claude"),
  });
  const id = String(at(accepted.body, "id"));
  await eventually(() => env.upstream.batches.created, "the provider batch is created");
  const cancelled = await call(env.gw.url, "POST", `/api/v1/batches/${id}/cancel`, { key: env.gw.key });
  assert.is(cancelled.status, 200, cancelled.text);
  const done = await waitTerminal(env.gw.url, env.gw.key, id);
  assert.is(at(done.body, "status"), "cancelled");
  const results = at(done.body, "results") as ItemView[];
  assert.is(results.length, 3);
  assert.ok(results.every((r) => r.error?.error_type === "cancelled"));
});

test("DELETE: a provider cleanup failure is a 502 and the batch stays; a later DELETE removes both sides", async ({
  env,
}) => {
  const { id } = await runBatch(env, {
    endpoint: "/v1/chat/completions",
    model: "mock/claude",
    requests: chatItems(2, "mock/claude"),
  });
  env.upstream.batches.fault({ deleteError: { status: 500, times: 1 } });
  const failed = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key: env.gw.key });
  assert.is(failed.status, 502, failed.text);
  assert.match(String(at(failed.body, "error", "message")), /not deleted, try again later/);
  assert.is((await call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key: env.gw.key })).status, 200, "still there");

  const deleted = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key: env.gw.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(at(deleted.body, "deletion"), {
    svc: "deleted",
    upstream: { provider: "mockanthropic", status: "deleted" },
  });
  assert.is(env.upstream.batches.deleted, 1);
  assert.is((await call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key: env.gw.key })).status, 404);
  assert.is((await batchLedger(env.gw.databaseUrl, id)).length, 2, "deletion is not a refund");
});

test("DELETE of an OpenAI file batch removes its input and result files there", async ({ env }) => {
  const { id } = await runBatch(env, { endpoint: "/v1/chat/completions", model: "mock/chat", requests: chatItems(2) });
  assert.ok(env.upstream.batches.files() > 0);
  const deleted = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key: env.gw.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(at(deleted.body, "deletion", "upstream"), { provider: "mockai", status: "deleted" });
  assert.is(env.upstream.batches.files(), 0);
});

test(
  "DELETE of a batch run item by item (embeddings have no provider batch API): " +
    "upstream {provider, status: unsupported}",
  async ({ env }) => {
    const requests = [{ custom_id: "e0", body: { model: "mock/embed", input: "text" } }];
    const { id } = await runBatch(env, { endpoint: "/v1/embeddings", model: "mock/embed", requests });
    const deleted = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key: env.gw.key });
    assert.is(deleted.status, 200, deleted.text);
    assert.equal(at(deleted.body, "deletion"), {
      svc: "deleted",
      upstream: { provider: "mockai", status: "unsupported" },
    });
  },
);

test.run();

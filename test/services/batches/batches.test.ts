import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { eventually } from "../../support/eventually.js";
import { at, call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { batchLedger, chatItems, FAST_ENGINE, sql, submit, waitTerminal } from "../../support/batches.js";

/**
 * The batch lifecycle over REST: submission (202 with `validating`, then completion by the
 * batch runner), results and usage, the ledger, listing, cancellation, deletion and retention.
 */
const test = suite<{ env: InferenceGateway; key: string }>("batches");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway(FAST_ENGINE);
  ctx.key = ctx.env.gw.key;
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

test("a chat batch is accepted as validating, completes, and every item has one result and one ledger row", async ({
  env,
  key,
}) => {
  const accepted = await submit(env.gw.url, key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(25),
  });
  assert.is(accepted.status, 202, accepted.text);
  assert.is(at(accepted.body, "object"), "batch");
  assert.is(at(accepted.body, "status"), "validating");
  assert.is(at(accepted.body, "completion_window"), "24h");
  assert.is(at(accepted.body, "results"), null);
  assert.is(at(accepted.body, "finalized_at"), null);
  assert.equal(at(accepted.body, "request_counts"), { completed: 0, failed: 0, total: 25 });
  const id = String(at(accepted.body, "id"));

  const done = await waitTerminal(env.gw.url, key, id);
  assert.is(at(done.body, "status"), "completed", done.text);
  assert.equal(at(done.body, "request_counts"), { completed: 25, failed: 0, total: 25 });
  assert.type(at(done.body, "finalized_at"), "number");
  const results = at(done.body, "results") as {
    id: string;
    custom_id: string;
    response: { status_code: number; request_id: string; body: Record<string, unknown> };
    error: unknown;
  }[];
  assert.is(results.length, 25);
  assert.equal(
    results.map((r) => r.custom_id).sort(),
    chatItems(25)
      .map((i) => i.custom_id)
      .sort(),
  );
  for (const result of results) {
    assert.is(result.error, null);
    assert.is(result.response.status_code, 200);
    assert.is(result.response.body.object, "chat.completion");
    assert.is(result.response.request_id, result.id);
  }
  const usage = at(done.body, "usage") as {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    cost: number;
  };
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  assert.is(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);

  const ledger = await batchLedger(env.gw.databaseUrl, id);
  assert.is(ledger.length, 25, "one ledger row per item");
  assert.equal(new Set(ledger.map((row) => row.generation_id)), new Set(results.map((r) => r.id)));
  const ledgerCost = ledger.reduce((sum, row) => sum + Number(row.cost_usd), 0);
  assert.ok(Math.abs(ledgerCost - usage.cost) < 1e-9, `usage.cost ${usage.cost} = ledger ${ledgerCost}`);
});

test("embeddings batches return embedding lists", async ({ env, key }) => {
  const accepted = await submit(env.gw.url, key, {
    endpoint: "/v1/embeddings",
    model: "mock/embed",
    requests: [
      { custom_id: "a", body: { input: "hello" } },
      { custom_id: "b", body: { input: ["one", "two"] } },
    ],
  });
  assert.is(accepted.status, 202, accepted.text);
  const done = await waitTerminal(env.gw.url, key, String(at(accepted.body, "id")));
  assert.is(at(done.body, "status"), "completed", done.text);
  const results = at(done.body, "results") as { custom_id: string; response: { body: { data: unknown[] } } }[];
  const b = results.find((r) => r.custom_id === "b")!;
  assert.is(b.response.body.data.length, 2);
});

test("responses and messages batches are translated both ways, like the live routes", async ({ env, key }) => {
  const responses = await submit(env.gw.url, key, {
    endpoint: "/v1/responses",
    model: "mock/chat",
    requests: [{ custom_id: "r1", body: { model: "mock/chat", input: "Say hello", max_output_tokens: 16 } }],
  });
  assert.is(responses.status, 202, responses.text);
  const messages = await submit(env.gw.url, key, {
    endpoint: "/v1/messages",
    model: "mock/claude",
    requests: [
      {
        custom_id: "m1",
        body: { model: "mock/claude", max_tokens: 16, messages: [{ role: "user", content: "Say hello" }] },
      },
    ],
  });
  assert.is(messages.status, 202, messages.text);
  const r = await waitTerminal(env.gw.url, key, String(at(responses.body, "id")));
  const m = await waitTerminal(env.gw.url, key, String(at(messages.body, "id")));
  assert.is(at(r.body, "results", 0, "response", "body", "object"), "response", r.text.slice(0, 400));
  assert.is(at(r.body, "results", 0, "response", "body", "status"), "completed");
  assert.is(at(m.body, "results", 0, "response", "body", "type"), "message", m.text.slice(0, 400));
  assert.is(at(m.body, "results", 0, "response", "body", "role"), "assistant");

  const bad = await submit(env.gw.url, key, {
    endpoint: "/v1/messages",
    model: "mock/claude",
    requests: [{ custom_id: "m1", body: { messages: [{ role: "user", content: "x" }] } }],
  });
  assert.is(bad.status, 400, bad.text);
  assert.match(String(at(bad.body, "error", "message")), /requests\[0\]\.body: .*max_tokens/);
});

test(
  "bad submissions: 400 naming the item, unknown model 400, " +
    "duplicate custom ids and variants 422, blocked model 403",
  async ({ env, key }) => {
    const expect = async (body: Record<string, unknown>, status: number, message: RegExp) => {
      const res = await submit(env.gw.url, key, body);
      assert.is(res.status, status, res.text);
      assert.is(at(res.body, "error", "code"), status);
      assert.match(String(at(res.body, "error", "message")), message);
    };
    const base = { endpoint: "/v1/chat/completions", model: "mock/chat" };
    await expect({ ...base, requests: [] }, 400, /requests/);
    await expect(
      { ...base, requests: [{ body: { messages: [{ role: "user", content: "x" }] } }] },
      400,
      /requests\[0\]\.custom_id/,
    );
    await expect(
      { ...base, requests: [...chatItems(2), { custom_id: "x", body: { messages: [] } }] },
      400,
      /requests\[2\]\.body\.messages/,
    );
    await expect(
      {
        ...base,
        requests: [{ custom_id: "x", body: { model: "mock/claude", messages: [{ role: "user", content: "x" }] } }],
      },
      400,
      /requests\[0\]\.body\.model/,
    );
    await expect(
      { ...base, model: "nobody/nothing", requests: chatItems(1, "nobody/nothing") },
      400,
      /nobody\/nothing/,
    );
    await expect({ ...base, model: "mock/embed", requests: chatItems(1, "mock/embed") }, 400, /mock\/embed/);
    await expect({ ...base, endpoint: "/v1/nothing", requests: chatItems(1) }, 400, /endpoint/);
    await expect({ ...base, completion_window: "48h", requests: chatItems(1) }, 400, /completion_window/);
    await expect({ ...base, requests: [...chatItems(2), ...chatItems(1)] }, 422, /custom_id 'item-0' repeats/);
    await expect({ ...base, model: "mock/chat:nitro", requests: chatItems(1, "mock/chat:nitro") }, 422, /variants/);
    await expect({ ...base, provider: { only: ["nobody"] }, requests: chatItems(1) }, 400, /provider/);

    const created = await call(env.gw.url, "POST", "/api/v1/keys", { key, body: { name: "batch-guarded" } });
    const guarded = String(at(created.body, "key"));
    const guardrail = await call(env.gw.url, "POST", "/api/v1/guardrails", {
      key,
      body: { name: "no chat for batches", ignored_models: ["mock/chat"] },
    });
    await call(env.gw.url, "POST", `/api/v1/guardrails/${String(at(guardrail.body, "data", "id"))}/assignments/keys`, {
      key,
      body: { key_hashes: [String(at(created.body, "data", "hash"))] },
    });
    const blocked = await submit(env.gw.url, guarded, { ...base, requests: chatItems(1) });
    assert.is(blocked.status, 403, blocked.text);
  },
);

test("the estimated cost of all items over the key's credit limit is 402, and nothing is stored", async ({
  env,
  key,
}) => {
  const created = await call(env.gw.url, "POST", "/api/v1/keys", { key, body: { name: "small", limit: 0.001 } });
  const small = String(at(created.body, "key"));
  const before = await call(env.gw.url, "GET", "/api/v1/batches", { key: small });
  const res = await submit(env.gw.url, small, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(400).map((i) => ({ ...i, body: { ...i.body, max_tokens: 1000 } })),
  });
  assert.is(res.status, 402, res.text);
  const after = await call(env.gw.url, "GET", "/api/v1/batches", { key: small });
  assert.equal(at(after.body, "data"), at(before.body, "data"));
});

test("Idempotency-Key: same body gives the same batch, another body 409, concurrent duplicates one batch", async ({
  env,
  key,
}) => {
  const body = { endpoint: "/v1/chat/completions", model: "mock/chat", requests: chatItems(3) };
  const first = await submit(env.gw.url, key, body, { "idempotency-key": "idem-1" });
  const again = await submit(env.gw.url, key, body, { "idempotency-key": "idem-1" });
  assert.is(first.status, 202);
  assert.is(again.status, 202);
  assert.is(at(again.body, "id"), at(first.body, "id"));
  const other = await submit(env.gw.url, key, { ...body, requests: chatItems(4) }, { "idempotency-key": "idem-1" });
  assert.is(other.status, 409, other.text);

  const racing = await Promise.all(
    Array.from({ length: 6 }, () => submit(env.gw.url, key, body, { "idempotency-key": "idem-race" })),
  );
  assert.equal(
    racing.map((r) => r.status),
    Array(6).fill(202),
  );
  assert.is(new Set(racing.map((r) => at(r.body, "id"))).size, 1);
});

test("list is newest first with cursor pagination and no results", async ({ env, key }) => {
  // A workspace of its own: its list holds exactly the three batches submitted here.
  const workspace = await call(env.gw.url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "Lister", slug: "lister" },
  });
  assert.is(workspace.status, 201, workspace.text);
  const created = await call(env.gw.url, "POST", "/api/v1/keys", {
    key,
    body: { name: "lister", workspace_id: at(workspace.body, "data", "id") },
  });
  assert.is(created.status, 201, created.text);
  const lister = String(at(created.body, "key"));
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push(
      String(
        at(
          (
            await submit(env.gw.url, lister, {
              endpoint: "/v1/chat/completions",
              model: "mock/chat",
              requests: chatItems(1),
            })
          ).body,
          "id",
        ),
      ),
    );
  const page = await call(env.gw.url, "GET", "/api/v1/batches?limit=2", { key: lister });
  assert.is(page.status, 200, page.text);
  assert.is(at(page.body, "object"), "list");
  const data = at(page.body, "data") as { id: string; results: unknown }[];
  assert.equal(
    data.map((b) => b.id),
    [ids[2], ids[1]],
    "the two newest, newest first",
  );
  assert.is(at(page.body, "has_more"), true);
  assert.is(at(page.body, "last_id"), ids[1]);
  assert.ok(data.every((b) => b.results === null));
  const next = await call(env.gw.url, "GET", `/api/v1/batches?limit=2&after=${String(at(page.body, "last_id"))}`, {
    key: lister,
  });
  assert.is(next.status, 200, next.text);
  assert.equal(
    (at(next.body, "data") as { id: string }[]).map((b) => b.id),
    [ids[0]],
    "the oldest, after the cursor",
  );
  assert.is(at(next.body, "has_more"), false);
});

test("cancel: items not yet run end cancelled, counts add up; a terminal batch cannot be cancelled again", async ({
  env,
  key,
}) => {
  env.upstream.rule({ delayMs: 200 });
  const accepted = await submit(env.gw.url, key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(300),
  });
  const id = String(at(accepted.body, "id"));
  const cancelled = await call(env.gw.url, "POST", `/api/v1/batches/${id}/cancel`, { key });
  assert.is(cancelled.status, 200, cancelled.text);
  assert.ok(["cancelling", "cancelled"].includes(String(at(cancelled.body, "status"))));
  const done = await waitTerminal(env.gw.url, key, id);
  assert.is(at(done.body, "status"), "cancelled", done.text);
  const counts = at(done.body, "request_counts") as { completed: number; failed: number; total: number };
  assert.is(counts.completed + counts.failed, 300);
  assert.ok(counts.failed > 0);
  const results = at(done.body, "results") as { error: { error_type: string } | null }[];
  assert.is(results.length, 300);
  assert.ok(results.some((r) => r.error?.error_type === "cancelled"));
  const again = await call(env.gw.url, "POST", `/api/v1/batches/${id}/cancel`, { key });
  assert.is(again.status, 409);
});

test("delete: 409 before the end, then purges the batch (404 after) and keeps the ledger", async ({ env, key }) => {
  env.upstream.rule({ delayMs: 300, times: 1 });
  const accepted = await submit(env.gw.url, key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(2),
  });
  const id = String(at(accepted.body, "id"));
  const early = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key });
  assert.is(early.status, 409, early.text);
  await waitTerminal(env.gw.url, key, id);
  const deleted = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key });
  assert.is(deleted.status, 200, deleted.text);
  // Run item by item: no provider holds a copy (status none); provider names where the items went.
  assert.equal(deleted.body, {
    id,
    object: "batch",
    deletion: { svc: "deleted", upstream: { provider: "mockai", status: "unsupported" } },
  });
  assert.is((await call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key })).status, 404);
  assert.is((await batchLedger(env.gw.databaseUrl, id)).length, 2, "billing records survive deletion");
});

test('delete of a batch none of whose items reached a provider: upstream {provider: "", status: unsupported}', async ({
  env,
  key,
}) => {
  // Cancelled before any item ran: written as such, since the runner would race a real submission.
  const me = at((await call(env.gw.url, "GET", "/api/v1/key", { key })).body, "data") as {
    organization_id: string;
    workspace_id: string;
  };
  const id = `batch_never_ran_${process.pid}`;
  await sql(
    env.gw.databaseUrl,
    `INSERT INTO batches (id, organization_id, workspace_id, key_hash, endpoint, model, status, expires_at,
                          finalized_at, total, failed)
     VALUES ($1, $2, $3, $4, '/v1/chat/completions', 'mock/chat', 'cancelled', now() + interval '1 day', now(), 0, 0)`,
    [id, me.organization_id, me.workspace_id, hashKey(key)],
  );
  const deleted = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(at(deleted.body, "deletion", "upstream"), { provider: "", status: "unsupported" });
});

test("another workspace's batch is a 404; a batch older than 30 days answers 410", async ({ env, key }) => {
  const accepted = await submit(env.gw.url, key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(1),
  });
  const id = String(at(accepted.body, "id"));
  await waitTerminal(env.gw.url, key, id);
  const workspace = await call(env.gw.url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "elsewhere", slug: `elsewhere-${Date.now()}` },
  });
  const outsider = await call(env.gw.url, "POST", "/api/v1/keys", {
    key,
    body: { name: "outsider", workspace_id: String(at(workspace.body, "data", "id")) },
  });
  assert.is(
    (await call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key: String(at(outsider.body, "key")) })).status,
    404,
  );

  await sql(env.gw.databaseUrl, "UPDATE batches SET created_at = now() - interval '31 days' WHERE id = $1", [id]);
  const res = await eventually(
    () => call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key }),
    "the old batch is gone",
    { until: (now) => now.status === 410 },
  );
  assert.is(at(res.body, "error", "code"), 410, res.text);
  assert.is((await batchLedger(env.gw.databaseUrl, id)).length, 1);
});

test.run();

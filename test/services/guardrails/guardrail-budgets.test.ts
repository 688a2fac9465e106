import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";

/** GET /key: the budgets and data regions that guardrails put on a key. */
const test = suite<{ gw: TestGateway }>("guardrail budgets on GET /key");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

type Json = Record<string, unknown>;
const BUDGET_FIELDS = [
  "budget_id",
  "guardrail_id",
  "include_byok",
  "limit_usd",
  "remaining_usd",
  "spend_usd",
  "reset_interval",
  "resets_at",
  "scope",
];

async function newGuardrail(gw: TestGateway, body: Json = {}): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/guardrails", { key: gw.key, body: { name: "budget", ...body } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function newKey(gw: TestGateway, body: Json = {}): Promise<{ secret: string; hash: string }> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "budgeted", ...body } });
  assert.is(res.status, 201, res.text);
  return { secret: at(res.body, "key") as string, hash: at(res.body, "data", "hash") as string };
}

let counter = 0;
async function newMember(gw: TestGateway): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/organization/members", {
    key: gw.key,
    body: { email: `budget-${++counter}@example.com` },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function newWorkspace(gw: TestGateway, body: Json = {}): Promise<string> {
  const slug = `guardrail-budget-${++counter}`;
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: slug, slug, ...body } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function assignKey(gw: TestGateway, guardrailId: string, hash: string): Promise<void> {
  const res = await call(gw.url, "POST", `/api/v1/guardrails/${guardrailId}/assignments/keys`, {
    key: gw.key,
    body: { key_hashes: [hash] },
  });
  assert.is(res.status, 200, res.text);
}

async function assignMember(gw: TestGateway, guardrailId: string, userId: string): Promise<void> {
  const res = await call(gw.url, "POST", `/api/v1/guardrails/${guardrailId}/assignments/members`, {
    key: gw.key,
    body: { member_user_ids: [userId] },
  });
  assert.is(res.status, 200, res.text);
}

async function currentKey(gw: TestGateway, secret: string): Promise<Json> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key: secret });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data") as Json;
}

function guardrailBudgets(info: Json): Json[] {
  return (info.budgets as Json[]).filter((b) => b.guardrail_id !== null);
}

function firstOfNextMonth(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

test("a key without guardrails: no guardrail budgets and every data region", async ({ gw }) => {
  const key = await newKey(gw);
  const info = await currentKey(gw, key.secret);
  assert.equal(info.budgets, []);
  assert.is(info.effective_budget, null);
  assert.equal(info.allowed_data_regions, ["global", "europe", "us"]);
});

test("a guardrail assigned to the key: a budget with scope key and every field", async ({ gw }) => {
  const guardrailId = await newGuardrail(gw, {
    limit_usd: 10,
    reset_interval: "monthly",
    include_byok_in_budgets: true,
  });
  const key = await newKey(gw);
  await assignKey(gw, guardrailId, key.hash);
  const info = await currentKey(gw, key.secret);
  const budgets = info.budgets as Json[];
  assert.is(budgets.length, 1);
  const budget = budgets[0]!;
  assert.equal(Object.keys(budget).sort(), [...BUDGET_FIELDS].sort());
  assert.equal(budget, {
    budget_id: null,
    guardrail_id: guardrailId,
    include_byok: true,
    limit_usd: 10,
    remaining_usd: 10,
    spend_usd: 0,
    reset_interval: "monthly",
    resets_at: firstOfNextMonth(),
    scope: "key",
  });
  assert.equal(info.effective_budget, budget);
});

test("a guardrail assigned to the key's creator: scope member; keys without that creator are not affected", async ({
  gw,
}) => {
  const member = await newMember(gw);
  const guardrailId = await newGuardrail(gw, { limit_usd: 4, reset_interval: "weekly" });
  await assignMember(gw, guardrailId, member);
  const theirs = await newKey(gw, { creator_user_id: member });
  const info = await currentKey(gw, theirs.secret);
  const [budget] = guardrailBudgets(info);
  assert.ok(budget, "the member's guardrail applies");
  assert.is(budget.guardrail_id, guardrailId);
  assert.is(budget.scope, "member");
  assert.is(budget.reset_interval, "weekly");
  assert.is(budget.include_byok, false);
  const resetsAt = Date.parse(String(budget.resets_at));
  assert.is(new Date(resetsAt).getUTCDay(), 1, "weeks reset on Monday");
  assert.ok(resetsAt > Date.now() && resetsAt <= Date.now() + 7 * 86_400_000);

  const unowned = await newKey(gw);
  assert.equal(guardrailBudgets(await currentKey(gw, unowned.secret)), []);
  const otherMember = await newMember(gw);
  const otherOwned = await newKey(gw, { creator_user_id: otherMember });
  assert.equal(guardrailBudgets(await currentKey(gw, otherOwned.secret)), []);
});

test("the default guardrail of the key's workspace: scope workspace; a lifetime budget never resets", async ({
  gw,
}) => {
  const guardrailId = await newGuardrail(gw, { limit_usd: 7.5 });
  const workspaceId = await newWorkspace(gw, { default_guardrail_id: guardrailId });
  const key = await newKey(gw, { workspace_id: workspaceId });
  const [budget] = guardrailBudgets(await currentKey(gw, key.secret));
  assert.ok(budget);
  assert.is(budget.guardrail_id, guardrailId);
  assert.is(budget.scope, "workspace");
  assert.is(budget.budget_id, null);
  assert.is(budget.limit_usd, 7.5);
  assert.is(budget.remaining_usd, 7.5);
  assert.is(budget.reset_interval, "lifetime");
  assert.is(budget.resets_at, null);

  const elsewhere = await newKey(gw);
  assert.equal(
    guardrailBudgets(await currentKey(gw, elsewhere.secret)),
    [],
    "keys of other workspaces are not affected",
  );
});

test("a guardrail reached several ways appears once, with the narrowest scope", async ({ gw }) => {
  const member = await newMember(gw);
  const guardrailId = await newGuardrail(gw, { limit_usd: 3, reset_interval: "daily" });
  const workspaceId = await newWorkspace(gw, { default_guardrail_id: guardrailId });
  await assignMember(gw, guardrailId, member);
  const key = await newKey(gw, { workspace_id: workspaceId, creator_user_id: member });

  let budgets = guardrailBudgets(await currentKey(gw, key.secret));
  assert.equal(
    budgets.map((b) => [b.guardrail_id, b.scope]),
    [[guardrailId, "member"]],
  );
  await assignKey(gw, guardrailId, key.hash);
  budgets = guardrailBudgets(await currentKey(gw, key.secret));
  assert.equal(
    budgets.map((b) => [b.guardrail_id, b.scope]),
    [[guardrailId, "key"]],
  );

  const res = await call(gw.url, "POST", `/api/v1/guardrails/${guardrailId}/assignments/keys/remove`, {
    key: gw.key,
    body: { key_hashes: [key.hash] },
  });
  assert.is(res.status, 200, res.text);
  const remove = await call(gw.url, "POST", `/api/v1/guardrails/${guardrailId}/assignments/members/remove`, {
    key: gw.key,
    body: { member_user_ids: [member] },
  });
  assert.is(remove.status, 200, remove.text);
  budgets = guardrailBudgets(await currentKey(gw, key.secret));
  assert.equal(
    budgets.map((b) => [b.guardrail_id, b.scope]),
    [[guardrailId, "workspace"]],
  );
});

test("budgets of every layer together; effective_budget is the one with the least remaining", async ({ gw }) => {
  const member = await newMember(gw);
  const viaKey = await newGuardrail(gw, { limit_usd: 20, reset_interval: "monthly" });
  const viaMember = await newGuardrail(gw, { limit_usd: 6, reset_interval: "weekly" });
  const viaWorkspace = await newGuardrail(gw, { limit_usd: 9 });
  const noBudget = await newGuardrail(gw, { allowed_models: ["a/b"] });
  const workspaceId = await newWorkspace(gw, { default_guardrail_id: viaWorkspace });
  const put = await call(gw.url, "PUT", `/api/v1/workspaces/${workspaceId}/budgets/monthly`, {
    key: gw.key,
    body: { limit_usd: 50 },
  });
  assert.is(put.status, 200, put.text);
  await assignMember(gw, viaMember, member);
  const key = await newKey(gw, { workspace_id: workspaceId, creator_user_id: member, limit: 30 });
  await assignKey(gw, viaKey, key.hash);
  await assignKey(gw, noBudget, key.hash);

  const info = await currentKey(gw, key.secret);
  const budgets = info.budgets as Json[];
  assert.equal(
    budgets.map((b) => [b.scope, b.guardrail_id, b.limit_usd]),
    [
      ["key", null, 30],
      ["key", viaKey, 20],
      ["member", viaMember, 6],
      ["workspace", viaWorkspace, 9],
      ["workspace", null, 50],
    ],
    "narrowest first; a guardrail without a limit adds no budget",
  );
  assert.is(at(info, "effective_budget", "guardrail_id"), viaMember);
  assert.is(at(info, "effective_budget", "remaining_usd"), 6);

  // Lowering the key's own limit below every guardrail makes it bind.
  const patched = await call(gw.url, "PATCH", `/api/v1/keys/${key.hash}`, { key: gw.key, body: { limit: 1 } });
  assert.is(patched.status, 200, patched.text);
  const after = await currentKey(gw, key.secret);
  assert.is(at(after, "effective_budget", "scope"), "key");
  assert.is(at(after, "effective_budget", "guardrail_id"), null);

  // A guardrail's budget removed by PATCH disappears from GET /key.
  const cleared = await call(gw.url, "PATCH", `/api/v1/guardrails/${viaMember}`, {
    key: gw.key,
    body: { limit_usd: null },
  });
  assert.is(cleared.status, 200, cleared.text);
  assert.not.ok(guardrailBudgets(await currentKey(gw, key.secret)).some((b) => b.guardrail_id === viaMember));
});

test("allowed_data_regions is the intersection of the guardrails that restrict regions", async ({ gw }) => {
  const member = await newMember(gw);
  const globalEurope = await newGuardrail(gw, { allowed_data_regions: ["global", "europe"] });
  const europeUs = await newGuardrail(gw, { allowed_data_regions: ["us", "europe"] });
  const unrestricted = await newGuardrail(gw, { limit_usd: 1 });
  const workspaceId = await newWorkspace(gw, { default_guardrail_id: europeUs });
  await assignMember(gw, globalEurope, member);

  const key = await newKey(gw, { workspace_id: workspaceId, creator_user_id: member });
  await assignKey(gw, unrestricted, key.hash);
  assert.equal((await currentKey(gw, key.secret)).allowed_data_regions, ["europe"]);

  const onlyDefault = await newKey(gw, { workspace_id: workspaceId });
  assert.equal((await currentKey(gw, onlyDefault.secret)).allowed_data_regions, ["europe", "us"]);

  const usOnly = await newGuardrail(gw, { allowed_data_regions: ["us"] });
  await assignKey(gw, usOnly, onlyDefault.hash);
  assert.equal((await currentKey(gw, onlyDefault.secret)).allowed_data_regions, ["us"]);
  await assignKey(gw, usOnly, key.hash);
  assert.equal((await currentKey(gw, key.secret)).allowed_data_regions, [], "no region satisfies every guardrail");
});

test("another organization's guardrails never reach a key", async ({ gw }) => {
  const other = await seedOrganization("guardrail-budgets-other");
  const res = await call(gw.url, "POST", "/api/v1/guardrails", {
    key: other.key,
    body: { name: "theirs", limit_usd: 1, allowed_data_regions: ["us"] },
  });
  assert.is(res.status, 201, res.text);
  const theirKey = await call(gw.url, "POST", "/api/v1/keys", { key: other.key, body: { name: "theirs" } });
  const assigned = await call(gw.url, "POST", `/api/v1/guardrails/${at(res.body, "data", "id")}/assignments/keys`, {
    key: other.key,
    body: { key_hashes: [at(theirKey.body, "data", "hash")] },
  });
  assert.is(assigned.status, 200, assigned.text);
  const mine = await newKey(gw);
  const info = await currentKey(gw, mine.secret);
  assert.equal(info.budgets, []);
  assert.equal(info.allowed_data_regions, ["global", "europe", "us"]);
  const theirs = await currentKey(gw, at(theirKey.body, "key") as string);
  assert.is((theirs.budgets as Json[]).length, 1);
  assert.equal(theirs.allowed_data_regions, ["us"]);
});

test.run();

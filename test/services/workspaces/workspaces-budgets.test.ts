import * as assert from "uvu/assert";
import { WorkspaceRow } from "../../../server/platform/db/models.js";
import type { TestGateway } from "../../support/gateway.js";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID } from "../../support/shapes.js";
import { assertError, newWorkspace, plainKey, workspacesSuite } from "./workspaces-fixture.js";

/** A workspace's budgets: PUT and DELETE per interval, and what GET /key shows of them to the workspace's keys. */
const test = workspacesSuite("workspaces: budgets");

const putBudget = (gw: TestGateway, ref: string, interval: string, body: Record<string, unknown>, key = gw.key) =>
  call(gw.url, "PUT", `/api/v1/workspaces/${encodeURIComponent(ref)}/budgets/${interval}`, { key, body });

const deleteBudget = (gw: TestGateway, ref: string, interval: string, key = gw.key) =>
  call(gw.url, "DELETE", `/api/v1/workspaces/${encodeURIComponent(ref)}/budgets/${interval}`, { key });

async function budgetsOf(gw: TestGateway, key: string): Promise<Array<Record<string, unknown>>> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data", "budgets") as Array<Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------------
// PUT and DELETE /workspaces/{ref}/budgets/{interval}
// ---------------------------------------------------------------------------------------------

test("PUT budget by UUID and by slug creates the budget; replacing an interval updates it", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-put");
  const byId = await putBudget(gw, ws.id, "monthly", { limit_usd: 20 });
  assert.is(byId.status, 200, byId.text);
  assert.match(String(at(byId.body, "data", "id")), UUID);
  assert.is(at(byId.body, "data", "workspace_id"), ws.id);
  assert.is(at(byId.body, "data", "limit_usd"), 20);
  assert.is(at(byId.body, "data", "reset_interval"), "monthly");

  const bySlug = await putBudget(gw, ws.slug, "daily", { limit_usd: 2.5 });
  assert.is(bySlug.status, 200, bySlug.text);
  assert.is(at(bySlug.body, "data", "workspace_id"), ws.id, "the slug addresses the same workspace");
  assert.is(at(bySlug.body, "data", "limit_usd"), 2.5);
  assert.is(at(bySlug.body, "data", "reset_interval"), "daily");

  const replaced = await putBudget(gw, ws.slug, "monthly", { limit_usd: 30 });
  assert.is(replaced.status, 200, replaced.text);
  assert.is(at(replaced.body, "data", "id"), at(byId.body, "data", "id"), "replacing keeps the budget");
  assert.is(at(replaced.body, "data", "limit_usd"), 30);

  const key = await plainKey(gw, ws.id);
  const budgets = await budgetsOf(gw, key);
  const monthly = budgets.filter((b) => b.reset_interval === "monthly");
  assert.is(monthly.length, 1, "one budget per interval");
  assert.is(monthly[0]!.limit_usd, 30);
  assert.is(budgets.filter((b) => b.reset_interval === "daily")[0]?.limit_usd, 2.5);
});

test("PUT budget: limit_usd must be a number greater than 0", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-limit");
  for (const body of [{}, { limit_usd: 0 }, { limit_usd: -1 }, { limit_usd: "5" }, { limit_usd: null }]) {
    assertError(await putBudget(gw, ws.id, "weekly", body), 400, /limit_usd/, JSON.stringify(body));
  }
  const key = await plainKey(gw, ws.id);
  assert.equal(await budgetsOf(gw, key), [], "nothing was stored");
});

test("PUT budget: limits must decrease lifetime > monthly > weekly > daily", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-order");
  assert.is((await putBudget(gw, ws.id, "weekly", { limit_usd: 10 })).status, 200);

  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 10 }), 400, undefined, "daily equal to weekly");
  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 11 }), 400, undefined, "daily above weekly");
  assertError(await putBudget(gw, ws.id, "monthly", { limit_usd: 10 }), 400, undefined, "monthly equal to weekly");
  assertError(await putBudget(gw, ws.id, "monthly", { limit_usd: 9 }), 400, undefined, "monthly below weekly");
  assertError(await putBudget(gw, ws.id, "lifetime", { limit_usd: 5 }), 400, undefined, "lifetime below weekly");

  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 5 })).status, 200);
  assert.is((await putBudget(gw, ws.id, "monthly", { limit_usd: 40 })).status, 200);
  assert.is((await putBudget(gw, ws.id, "lifetime", { limit_usd: 100 })).status, 200);

  // Non-adjacent intervals are ordered too, and a replacement must respect the others.
  assertError(await putBudget(gw, ws.id, "lifetime", { limit_usd: 40 }), 400, undefined, "lifetime equal to monthly");
  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 150 }), 400, undefined, "daily above lifetime");
  assertError(await putBudget(gw, ws.id, "weekly", { limit_usd: 4 }), 400, undefined, "weekly replaced below daily");
  assertError(await putBudget(gw, ws.id, "weekly", { limit_usd: 41 }), 400, undefined, "weekly replaced above monthly");
  assert.is((await putBudget(gw, ws.id, "weekly", { limit_usd: 39 })).status, 200);

  const key = await plainKey(gw, ws.id);
  const limits = Object.fromEntries((await budgetsOf(gw, key)).map((b) => [b.reset_interval as string, b.limit_usd]));
  assert.equal(limits, { daily: 5, weekly: 39, monthly: 40, lifetime: 100 }, "rejected writes changed nothing");

  // Removing a budget lifts its constraint.
  assert.is((await deleteBudget(gw, ws.id, "weekly")).status, 200);
  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 20 })).status, 200);
});

test("PUT budget: include_byok_in_budgets changes the workspace's flag; omitted leaves it", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-byok");
  const key = await plainKey(gw, ws.id);
  assert.is((await putBudget(gw, ws.id, "monthly", { limit_usd: 10 })).status, 200);
  assert.is((await budgetsOf(gw, key))[0]?.include_byok, false);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, false);

  assert.is((await putBudget(gw, ws.slug, "weekly", { limit_usd: 5, include_byok_in_budgets: true })).status, 200);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, true);
  const budgets = await budgetsOf(gw, key);
  assert.is(budgets.length, 2);
  for (const b of budgets) assert.is(b.include_byok, true, `${String(b.reset_interval)} follows the workspace flag`);

  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1 })).status, 200);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, true, "omitted: unchanged");

  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1, include_byok_in_budgets: false })).status, 200);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, false);
  for (const b of await budgetsOf(gw, key)) assert.is(b.include_byok, false);

  assertError(
    await putBudget(gw, ws.id, "daily", { limit_usd: 1, include_byok_in_budgets: "yes" }),
    400,
    /include_byok_in_budgets/,
  );
});

test("DELETE budget by UUID and by slug answers {deleted: true}, also when there was none", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-delete");
  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1 })).status, 200);
  assert.is((await putBudget(gw, ws.id, "lifetime", { limit_usd: 50 })).status, 200);
  const key = await plainKey(gw, ws.id);

  const byId = await deleteBudget(gw, ws.id, "daily");
  assert.is(byId.status, 200, byId.text);
  assert.equal(byId.body, { deleted: true });
  assert.equal(
    (await budgetsOf(gw, key)).map((b) => b.reset_interval),
    ["lifetime"],
  );

  const bySlug = await deleteBudget(gw, ws.slug, "lifetime");
  assert.is(bySlug.status, 200, bySlug.text);
  assert.equal(bySlug.body, { deleted: true });
  assert.equal(await budgetsOf(gw, key), []);

  for (const [ref, interval] of [
    [ws.id, "daily"],
    [ws.slug, "weekly"],
    [ws.slug, "monthly"],
    [ws.id, "lifetime"],
  ] as const) {
    const again = await deleteBudget(gw, ref, interval);
    assert.is(again.status, 200, `${ref} ${interval}: ${again.text}`);
    assert.equal(again.body, { deleted: true });
  }
});

test("budgets: an unknown interval is 400, an unknown workspace 404", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-bad");
  for (const interval of ["yearly", "Daily", "hourly"]) {
    assertError(await putBudget(gw, ws.id, interval, { limit_usd: 1 }), 400, /interval/, `PUT ${interval}`);
    assertError(await deleteBudget(gw, ws.id, interval), 400, /interval/, `DELETE ${interval}`);
  }
  for (const ref of ["00000000-0000-4000-8000-000000000000", "no-such-workspace"]) {
    assertError(await putBudget(gw, ref, "daily", { limit_usd: 1 }), 404, undefined, `PUT ${ref}`);
    assertError(await deleteBudget(gw, ref, "daily"), 404, undefined, `DELETE ${ref}`);
  }
});

test("budgets of another organization's workspace are out of reach (404) and stay untouched", async ({ gw }) => {
  const other = await seedOrganization("budget-other-org");
  const theirs = await putBudget(gw, other.workspaceId, "monthly", { limit_usd: 7 }, other.key);
  assert.is(theirs.status, 200, theirs.text);

  assertError(await putBudget(gw, other.workspaceId, "monthly", { limit_usd: 1000 }), 404, undefined, "PUT");
  assertError(await putBudget(gw, other.workspaceId, "daily", { limit_usd: 1 }), 404, undefined, "PUT new interval");
  assertError(await deleteBudget(gw, other.workspaceId, "monthly"), 404, undefined, "DELETE");
  assertError(await deleteBudget(gw, other.workspaceId, "weekly"), 404, undefined, "DELETE of an absent interval");

  const budgets = await budgetsOf(gw, other.key);
  assert.is(budgets.length, 1);
  assert.is(budgets[0]!.reset_interval, "monthly");
  assert.is(budgets[0]!.limit_usd, 7);
});

test("budgets: non-management key 403, no key 401", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-auth");
  assert.is((await putBudget(gw, ws.id, "monthly", { limit_usd: 10 })).status, 200);
  const secret = await plainKey(gw, ws.id);
  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 1 }, secret), 403, /management keys/);
  assertError(await deleteBudget(gw, ws.slug, "monthly", secret), 403, /management keys/);
  assertError(await call(gw.url, "PUT", `/api/v1/workspaces/${ws.id}/budgets/daily`, { body: { limit_usd: 1 } }), 401);
  assertError(await call(gw.url, "DELETE", `/api/v1/workspaces/${ws.id}/budgets/monthly`), 401);
  const budgets = await budgetsOf(gw, secret);
  assert.equal(
    budgets.map((b) => [b.reset_interval, b.limit_usd]),
    [["monthly", 10]],
    "nothing changed",
  );
});

// ---------------------------------------------------------------------------------------------
// GET /key with workspace budgets
// ---------------------------------------------------------------------------------------------

/** The next reset boundaries (UTC) seen from `now`, computed independently of the server. */
function boundaries(now: Date): Record<string, string | null> {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const dow = now.getUTCDay(); // 0 = Sunday, 1 = Monday
  const daysToMonday = (8 - dow) % 7 || 7;
  return {
    daily: new Date(Date.UTC(y, m, d + 1)).toISOString(),
    weekly: new Date(Date.UTC(y, m, d + daysToMonday)).toISOString(),
    monthly: new Date(Date.UTC(y, m + 1, 1)).toISOString(),
    lifetime: null,
  };
}

test(
  "GET /key lists the workspace budgets with their next UTC boundaries; " + "effective_budget has the least remaining",
  async ({ gw }) => {
    const ws = await newWorkspace(gw, "key-budgets");
    const ids: Record<string, string> = {};
    const limits: Record<string, number> = { lifetime: 100, monthly: 40, weekly: 15, daily: 4.5 };
    for (const interval of ["lifetime", "monthly", "weekly", "daily"]) {
      const res = await putBudget(gw, ws.id, interval, { limit_usd: limits[interval] });
      assert.is(res.status, 200, res.text);
      ids[interval] = at(res.body, "data", "id") as string;
    }
    const key = await plainKey(gw, ws.id);

    const before = boundaries(new Date());
    const res = await call(gw.url, "GET", "/api/v1/key", { key });
    const after = boundaries(new Date());
    assert.is(res.status, 200, res.text);
    assert.is(at(res.body, "data", "workspace_id"), ws.id);
    const budgets = at(res.body, "data", "budgets") as Array<Record<string, unknown>>;
    assert.is(budgets.length, 4);
    for (const interval of ["lifetime", "monthly", "weekly", "daily"]) {
      const b = budgets.find((x) => x.reset_interval === interval);
      assert.ok(b, `missing the ${interval} budget`);
      assert.is(b.scope, "workspace", interval);
      assert.is(b.budget_id, ids[interval], interval);
      assert.is(b.limit_usd, limits[interval], interval);
      assert.is(b.spend_usd, 0, interval);
      assert.is(b.remaining_usd, limits[interval], interval);
      assert.is(b.include_byok, false, interval);
      if (interval === "lifetime") {
        assert.is(b.resets_at, null, "a lifetime budget never resets");
      } else {
        assert.match(String(b.resets_at), ISO, interval);
        const resetsAt = new Date(String(b.resets_at)).toISOString();
        assert.ok(
          resetsAt === before[interval] || resetsAt === after[interval],
          `${interval}: ${resetsAt}, expected ${before[interval]}`,
        );
      }
    }
    const effective = at(res.body, "data", "effective_budget") as Record<string, unknown>;
    assert.is(effective.reset_interval, "daily");
    assert.is(effective.budget_id, ids.daily);
    assert.is(effective.scope, "workspace");
    assert.is(effective.remaining_usd, 4.5);
  },
);

test("GET /key: effective_budget is the least remaining across the key's own limit and the workspace budgets", async ({
  gw,
}) => {
  const ws = await newWorkspace(gw, "key-effective");
  assert.is((await putBudget(gw, ws.id, "weekly", { limit_usd: 8 })).status, 200);
  const lifetime = await putBudget(gw, ws.slug, "lifetime", { limit_usd: 30 });
  assert.is(lifetime.status, 200);

  const loose = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "loose", workspace_id: ws.id, limit: 50 },
  });
  assert.is(loose.status, 201, loose.text);
  const looseInfo = await call(gw.url, "GET", "/api/v1/key", { key: at(loose.body, "key") as string });
  assert.is((at(looseInfo.body, "data", "budgets") as unknown[]).length, 3);
  assert.is(at(looseInfo.body, "data", "effective_budget", "scope"), "workspace");
  assert.is(at(looseInfo.body, "data", "effective_budget", "reset_interval"), "weekly");
  assert.is(at(looseInfo.body, "data", "effective_budget", "remaining_usd"), 8);

  const tight = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "tight", workspace_id: ws.id, limit: 3 },
  });
  assert.is(tight.status, 201, tight.text);
  const tightInfo = await call(gw.url, "GET", "/api/v1/key", { key: at(tight.body, "key") as string });
  assert.is(at(tightInfo.body, "data", "effective_budget", "scope"), "key");
  assert.is(at(tightInfo.body, "data", "effective_budget", "remaining_usd"), 3);

  // Without the weekly budget the lifetime one binds the loose key.
  assert.is((await deleteBudget(gw, ws.id, "weekly")).status, 200);
  const after = await call(gw.url, "GET", "/api/v1/key", { key: at(loose.body, "key") as string });
  assert.is(at(after.body, "data", "effective_budget", "reset_interval"), "lifetime");
  assert.is(at(after.body, "data", "effective_budget", "budget_id"), at(lifetime.body, "data", "id"));
  assert.is(at(after.body, "data", "effective_budget", "resets_at"), null);
});

test("GET /key: keys of other workspaces do not see a workspace's budgets", async ({ gw }) => {
  const ws = await newWorkspace(gw, "key-isolated");
  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1 })).status, 200);
  const elsewhere = await newWorkspace(gw, "key-elsewhere");
  const key = await plainKey(gw, elsewhere.id);
  assert.equal(await budgetsOf(gw, key), []);
  const info = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(info.body, "data", "effective_budget"), null);
});

test.run();

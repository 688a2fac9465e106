import { randomUUID } from "node:crypto";
import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { releaseReservation, settleCall, type CallRecord } from "../../../server/engine/usage/usage-store.js";
import { at, call } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/** GET /key and the key management API report what settleCall put in the usage counters. */
const test = suite<{ gw: TestGateway; organizationId: string }>("key usage");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  const own = await call(ctx.gw.url, "GET", "/api/v1/key", { key: ctx.gw.key });
  ctx.organizationId = at(own.body, "data", "organization_id") as string;
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

type Json = Record<string, unknown>;

interface TestKey {
  secret: string;
  hash: string;
  workspaceId: string;
}

let counter = 0;

async function newKey(gw: TestGateway, body: Json = {}): Promise<TestKey> {
  const res = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: `usage-${++counter}`, ...body },
  });
  assert.is(res.status, 201, res.text);
  return {
    secret: at(res.body, "key") as string,
    hash: at(res.body, "data", "hash") as string,
    workspaceId: at(res.body, "data", "workspace_id") as string,
  };
}

async function newWorkspace(gw: TestGateway, body: Json = {}): Promise<string> {
  const slug = `usage-ws-${++counter}`;
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: slug, slug, ...body } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function currentKey(gw: TestGateway, secret: string): Promise<Json> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key: secret });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data") as Json;
}

function settle(
  gw: TestGateway,
  organizationId: string,
  key: TestKey,
  fields: Partial<CallRecord>,
  now?: Date,
): Promise<void> {
  const record: CallRecord = {
    generationId: `gen-${randomUUID()}`,
    organizationId,
    keyHash: key.hash,
    workspaceId: key.workspaceId,
    memberUserId: null,
    endUser: null,
    sessionId: null,
    api: "chat",
    modelId: "acme/small",
    providerSlug: "acme",
    endpointId: "acme/small@acme",
    status: "success",
    httpStatus: 200,
    streamed: false,
    promptTokens: 10,
    completionTokens: 5,
    reasoningTokens: 0,
    cachedTokens: 0,
    costUsd: "0",
    isByok: false,
    isFree: false,
    latencyMs: 100,
    generationMs: 400,
    reservationId: null,
    ...fields,
  };
  return settleCall(gw.gateway.sequelize, record, now);
}

const USAGE_FIELDS = [
  "usage",
  "usage_daily",
  "usage_weekly",
  "usage_monthly",
  "byok_usage",
  "byok_usage_daily",
  "byok_usage_weekly",
  "byok_usage_monthly",
];

function usageOf(data: Json): Json {
  return Object.fromEntries(USAGE_FIELDS.map((field) => [field, data[field]]));
}

/** Today's start in UTC, read off the ISO date rather than worked out by the code under test. */
function utcMidnight(now = new Date()): Date {
  return new Date(`${now.toISOString().slice(0, 10)}T00:00:00.000Z`);
}

/**
 * Instants and the daily, weekly and monthly period each one counts in (the period's first UTC
 * day), worked out by hand: days start at midnight UTC, weeks on Monday, months on the first.
 */
const PERIODS_OF: Array<[instant: string, daily: string, weekly: string, monthly: string]> = [
  // Leap day (a Thursday), its last millisecond, and the next day: a new month in the same week.
  ["2024-02-29T12:00:00.000Z", "2024-02-29", "2024-02-26", "2024-02-01"],
  ["2024-02-29T23:59:59.999Z", "2024-02-29", "2024-02-26", "2024-02-01"],
  ["2024-03-01T00:00:00.000Z", "2024-03-01", "2024-02-26", "2024-03-01"],
  // The last millisecond of February in a common year, and of a 30-day month.
  ["2023-02-28T23:59:59.999Z", "2023-02-28", "2023-02-27", "2023-02-01"],
  ["2024-04-30T23:59:59.999Z", "2024-04-30", "2024-04-29", "2024-04-01"],
  // A week boundary: Sunday's last millisecond, Monday's first.
  ["2024-06-16T23:59:59.999Z", "2024-06-16", "2024-06-10", "2024-06-01"],
  ["2024-06-17T00:00:00.000Z", "2024-06-17", "2024-06-17", "2024-06-01"],
  // The year's end on a Sunday; Monday 1 January opens a day, a week and a month at once.
  ["2023-12-31T23:59:59.999Z", "2023-12-31", "2023-12-25", "2023-12-01"],
  ["2024-01-01T00:00:00.000Z", "2024-01-01", "2024-01-01", "2024-01-01"],
  // The UTC day, never the caller's local one: late Sunday at UTC−2 is Monday in UTC, early Monday
  // at UTC+2 still Sunday; late 31 March at UTC−2 is already April, early 1 May at UTC+2 still April.
  ["2024-06-09T23:30:00.000-02:00", "2024-06-10", "2024-06-10", "2024-06-01"],
  ["2024-06-10T00:30:00.000+02:00", "2024-06-09", "2024-06-03", "2024-06-01"],
  ["2024-03-31T22:30:00.000-02:00", "2024-04-01", "2024-04-01", "2024-04-01"],
  ["2024-05-01T01:00:00.000+02:00", "2024-04-30", "2024-04-29", "2024-04-01"],
];

test("each call counts in the day, week and month that contain it, in UTC", async ({ gw, organizationId }) => {
  for (const [instant, daily, weekly, monthly] of PERIODS_OF) {
    const key = await newKey(gw);
    await settle(gw, organizationId, key, { costUsd: "1" }, new Date(instant));
    const counters = await gw.gateway.sequelize.query<{ period: string; start: string }>(
      `SELECT period, to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start
         FROM usage_counters WHERE scope = 'key' AND scope_id = $hash ORDER BY period`,
      { type: QueryTypes.SELECT, bind: { hash: key.hash } },
    );
    assert.equal(
      Object.fromEntries(counters.map((row) => [row.period, row.start])),
      {
        daily: `${daily}T00:00:00.000Z`,
        weekly: `${weekly}T00:00:00.000Z`,
        monthly: `${monthly}T00:00:00.000Z`,
        lifetime: "1970-01-01T00:00:00.000Z",
      },
      instant,
    );
  }
});

test("usage, usage_daily/weekly/monthly: the current periods' counters, lifetime for usage", async ({
  gw,
  organizationId,
}) => {
  const key = await newKey(gw);
  await settle(gw, organizationId, key, { costUsd: "0.5" });
  await settle(gw, organizationId, key, { costUsd: "0.25" }, new Date("2020-01-15T12:00:00Z"));
  // More than a month ago, whatever today is: in no current day, week or month.
  await settle(gw, organizationId, key, { costUsd: "0.125" }, new Date(Date.now() - 40 * 86_400_000));

  const expected = {
    usage: 0.875,
    usage_daily: 0.5,
    usage_weekly: 0.5,
    usage_monthly: 0.5,
    byok_usage: 0,
    byok_usage_daily: 0,
    byok_usage_weekly: 0,
    byok_usage_monthly: 0,
  };
  assert.equal(usageOf(await currentKey(gw, key.secret)), expected);

  const fetched = await call(gw.url, "GET", `/api/v1/keys/${key.hash}`, { key: gw.key });
  assert.is(fetched.status, 200, fetched.text);
  assert.equal(usageOf(at(fetched.body, "data") as Json), expected, "GET /keys/{hash} reports the same usage");
});

test("costs add up exactly: 0.1 + 0.2 is 0.3, and many tiny costs lose nothing", async ({ gw, organizationId }) => {
  const key = await newKey(gw);
  await settle(gw, organizationId, key, { costUsd: "0.1" });
  await settle(gw, organizationId, key, { costUsd: "0.2" });
  await Promise.all(Array.from({ length: 20 }, () => settle(gw, organizationId, key, { costUsd: "0.000000000001" })));
  const [row] = await gw.gateway.sequelize.query<{ spent_usd: string }>(
    "SELECT spent_usd::text FROM usage_counters WHERE scope = 'key' AND scope_id = $hash AND period = 'lifetime'",
    {
      type: QueryTypes.SELECT,
      bind: { hash: key.hash },
    },
  );
  assert.is(Number(row!.spent_usd), 0.30000000002);
  assert.match(row!.spent_usd, /^0\.30000000002(0*)$/, "concurrent settlements of one key all count");
  const info = await currentKey(gw, key.secret);
  assert.is(info.usage, 0.30000000002);
});

test("BYOK spend is reported apart and counts against the key's limit only with include_byok_in_limit", async ({
  gw,
  organizationId,
}) => {
  const key = await newKey(gw, { limit: 10 });
  await settle(gw, organizationId, key, { costUsd: "1" });
  await settle(gw, organizationId, key, { costUsd: "2", isByok: true });
  let info = await currentKey(gw, key.secret);
  assert.is(info.usage, 1);
  assert.is(info.byok_usage, 2);
  assert.is(info.byok_usage_daily, 2);
  assert.is(info.byok_usage_weekly, 2);
  assert.is(info.byok_usage_monthly, 2);
  assert.is(info.limit_remaining, 9);
  assert.is(at(info, "budgets", 0, "spend_usd"), 1);

  const patched = await call(gw.url, "PATCH", `/api/v1/keys/${key.hash}`, {
    key: gw.key,
    body: { include_byok_in_limit: true },
  });
  assert.is(patched.status, 200, patched.text);
  assert.is(at(patched.body, "data", "limit_remaining"), 7, "PATCH answers with the usage-aware remainder");
  info = await currentKey(gw, key.secret);
  assert.is(info.limit_remaining, 7);
  assert.is(at(info, "budgets", 0, "spend_usd"), 3);
  assert.is(at(info, "budgets", 0, "remaining_usd"), 7);
});

test("limit_remaining counts the current limit period only and never goes below zero", async ({
  gw,
  organizationId,
}) => {
  const daily = await newKey(gw, { limit: 1, limit_reset: "daily" });
  await settle(gw, organizationId, daily, { costUsd: "0.4" }, new Date(utcMidnight().getTime() - 1));
  await settle(gw, organizationId, daily, { costUsd: "0.3" });
  let info = await currentKey(gw, daily.secret);
  assert.is(info.limit_remaining, 0.7, "yesterday's spend does not count against a daily limit");
  assert.is(info.usage, 0.7, "lifetime usage has both calls (0.4 + 0.3)");
  assert.is(at(info, "budgets", 0, "reset_interval"), "daily");

  const lifetime = await newKey(gw, { limit: 1 });
  await settle(gw, organizationId, lifetime, { costUsd: "1.5" }, new Date("2021-06-01T00:00:00Z"));
  info = await currentKey(gw, lifetime.secret);
  assert.is(info.limit_remaining, 0);
  assert.is(at(info, "budgets", 0, "spend_usd"), 1.5);
  assert.is(at(info, "budgets", 0, "remaining_usd"), 0);
  assert.is(at(info, "effective_budget", "remaining_usd"), 0);

  const listed = await call(gw.url, "GET", "/api/v1/keys", { key: gw.key });
  const row = (at(listed.body, "data") as Json[]).find((k) => k.hash === lifetime.hash);
  assert.ok(row, "the key is listed");
  assert.is(row.usage, 1.5);
  assert.is(row.limit_remaining, 0);
});

test(
  "budgets: guardrail budgets count the key's spend, workspace budgets every key's; " + "each has its own include_byok",
  async ({ gw, organizationId }) => {
    const workspaceId = await newWorkspace(gw);
    const put = await call(gw.url, "PUT", `/api/v1/workspaces/${workspaceId}/budgets/monthly`, {
      key: gw.key,
      body: { limit_usd: 50 },
    });
    assert.is(put.status, 200, put.text);
    const guardrail = await call(gw.url, "POST", "/api/v1/guardrails", {
      key: gw.key,
      body: { name: `usage-${++counter}`, limit_usd: 20, reset_interval: "monthly", include_byok_in_budgets: true },
    });
    assert.is(guardrail.status, 201, guardrail.text);
    const guardrailId = at(guardrail.body, "data", "id") as string;
    const key = await newKey(gw, { workspace_id: workspaceId, limit: 30, limit_reset: "monthly" });
    const sibling = await newKey(gw, { workspace_id: workspaceId });
    const assigned = await call(gw.url, "POST", `/api/v1/guardrails/${guardrailId}/assignments/keys`, {
      key: gw.key,
      body: { key_hashes: [key.hash] },
    });
    assert.is(assigned.status, 200, assigned.text);

    await settle(gw, organizationId, key, { costUsd: "2" });
    await settle(gw, organizationId, key, { costUsd: "1", isByok: true });
    await settle(gw, organizationId, sibling, { costUsd: "4" });
    await settle(gw, organizationId, sibling, { costUsd: "8", isByok: true });

    let budgets = (await currentKey(gw, key.secret)).budgets as Json[];
    assert.equal(
      budgets.map((b) => [b.scope, b.guardrail_id, b.spend_usd, b.remaining_usd]),
      [
        ["key", null, 2, 28],
        ["key", guardrailId, 3, 17],
        ["workspace", null, 6, 44],
      ],
    );

    const patched = await call(gw.url, "PATCH", `/api/v1/workspaces/${workspaceId}`, {
      key: gw.key,
      body: { include_byok_in_budgets: true },
    });
    assert.is(patched.status, 200, patched.text);
    const info = await currentKey(gw, key.secret);
    budgets = info.budgets as Json[];
    assert.is(budgets[2]!.spend_usd, 15, "the workspace budget now counts BYOK spend of every key");
    assert.is(budgets[0]!.spend_usd, 2, "the key's limit still excludes BYOK");
    assert.is(at(info, "effective_budget", "guardrail_id"), guardrailId, "the budget with the least left binds");
    assert.is(at(info, "effective_budget", "remaining_usd"), 17);

    const siblingBudgets = (await currentKey(gw, sibling.secret)).budgets as Json[];
    assert.equal(
      siblingBudgets.map((b) => [b.scope, b.spend_usd]),
      [["workspace", 15]],
      "the guardrail reaches only the assigned key",
    );
  },
);

test("reservations are not spend; settling releases the call's reservation; releaseReservation frees one", async ({
  gw,
  organizationId,
}) => {
  const key = await newKey(gw, { limit: 5 });
  const reserve = async (): Promise<string> => {
    const id = randomUUID();
    await gw.gateway.sequelize.query(
      "INSERT INTO budget_reservations (id, key_hash, workspace_id, amount_usd, expires_at) " +
        "VALUES ($id, $hash, $ws, 3, now() + interval '1 hour')",
      {
        bind: { id, hash: key.hash, ws: key.workspaceId },
      },
    );
    return id;
  };
  const reservations = async (): Promise<number> => {
    const [row] = await gw.gateway.sequelize.query<{ n: string }>(
      "SELECT count(*) AS n FROM budget_reservations WHERE key_hash = $hash",
      {
        type: QueryTypes.SELECT,
        bind: { hash: key.hash },
      },
    );
    return Number(row!.n);
  };
  const first = await reserve();
  const second = await reserve();
  let info = await currentKey(gw, key.secret);
  assert.is(info.limit_remaining, 5);
  assert.is(at(info, "budgets", 0, "spend_usd"), 0);

  await settle(gw, organizationId, key, { costUsd: "1.25", reservationId: first });
  assert.is(await reservations(), 1);
  info = await currentKey(gw, key.secret);
  assert.is(info.limit_remaining, 3.75);

  await releaseReservation(gw.gateway.sequelize, second);
  assert.is(await reservations(), 0);
  await releaseReservation(gw.gateway.sequelize, second);
  assert.is(await reservations(), 0, "releasing twice is harmless");
});

test("settlement is atomic: a rejected ledger row leaves counters and the reservation untouched", async ({
  gw,
  organizationId,
}) => {
  const key = await newKey(gw);
  const reservationId = randomUUID();
  await gw.gateway.sequelize.query(
    "INSERT INTO budget_reservations (id, key_hash, workspace_id, amount_usd, expires_at) " +
      "VALUES ($id, $hash, $ws, 1, now() + interval '1 hour')",
    {
      bind: { id: reservationId, hash: key.hash, ws: key.workspaceId },
    },
  );
  let failed = false;
  try {
    await settle(gw, organizationId, key, { costUsd: "1", status: "exploded" as CallRecord["status"], reservationId });
  } catch {
    failed = true;
  }
  assert.ok(failed, "the CHECK constraint refuses the status");
  const [counts] = await gw.gateway.sequelize.query<{ counters: string; reservations: string; ledger: string }>(
    `SELECT (SELECT count(*) FROM usage_counters WHERE scope_id = $hash) AS counters,
            (SELECT count(*) FROM budget_reservations WHERE id = $id) AS reservations,
            (SELECT count(*) FROM usage_ledger WHERE key_hash = $hash) AS ledger`,
    { type: QueryTypes.SELECT, bind: { hash: key.hash, id: reservationId } },
  );
  assert.equal(counts, { counters: "0", reservations: "1", ledger: "0" });
});

test("a free call is recorded in the ledger but adds to no counter", async ({ gw, organizationId }) => {
  const key = await newKey(gw);
  await settle(gw, organizationId, key, { costUsd: "0", isFree: true, modelId: "acme/free" });
  const [counts] = await gw.gateway.sequelize.query<{ counters: string; ledger: string; total: number }>(
    `SELECT (SELECT count(*) FROM usage_counters WHERE scope_id = $hash) AS counters,
            (SELECT count(*) FROM usage_ledger WHERE key_hash = $hash AND is_free) AS ledger,
            (SELECT total_tokens FROM usage_ledger WHERE key_hash = $hash) AS total`,
    { type: QueryTypes.SELECT, bind: { hash: key.hash } },
  );
  assert.equal(counts, { counters: "0", ledger: "1", total: 15 });
  assert.is((await currentKey(gw, key.secret)).usage, 0);
});

test("free_model_daily_requests: used and remaining come from today's counter only", async ({ gw }) => {
  const key = await newKey(gw);
  const today = utcMidnight();
  const put = (start: Date, count: number) =>
    gw.gateway.sequelize.query(
      "INSERT INTO request_counters (name, window_start, count) VALUES ($name, $start, $count)",
      {
        bind: { name: `free:${key.hash}`, start: start.toISOString(), count },
      },
    );
  assert.equal((await currentKey(gw, key.secret)).free_model_daily_requests, { limit: 50, remaining: 50, used: 0 });
  await put(new Date(today.getTime() - 86_400_000), 40);
  await put(today, 3);
  assert.equal((await currentKey(gw, key.secret)).free_model_daily_requests, { limit: 50, remaining: 47, used: 3 });
  await gw.gateway.sequelize.query(
    "UPDATE request_counters SET count = 60 WHERE name = $name AND window_start = $start",
    {
      bind: { name: `free:${key.hash}`, start: today.toISOString() },
    },
  );
  assert.equal((await currentKey(gw, key.secret)).free_model_daily_requests, { limit: 50, remaining: 0, used: 60 });
});

test("usage of one key never shows on another", async ({ gw, organizationId }) => {
  const spender = await newKey(gw);
  const quiet = await newKey(gw);
  await settle(gw, organizationId, spender, { costUsd: "9" });
  const info = await currentKey(gw, quiet.secret);
  assert.is(info.usage, 0);
  assert.is(info.usage_daily, 0);
});

test.run();

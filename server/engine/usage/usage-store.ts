import { randomUUID } from "node:crypto";
import type pg from "pg";
import { QueryTypes, type Sequelize } from "sequelize";
import { isUsdDecimal } from "../money/money.js";
import { currentPeriodStart } from "./budget-layers.js";
import type { CounterRef, Spend } from "./usage-counters.js";

/** Everything the ledger keeps about one upstream call. */
export interface CallRecord {
  /** The `id` the client saw (e.g. `gen-…`). */
  generationId: string;
  organizationId: string;
  keyHash: string;
  workspaceId: string;
  memberUserId: string | null;
  endUser: string | null;
  sessionId: string | null;
  /**
   * The `x-request-id` of the request that made the call (wire/request-id.ts); none for work of the
   * gateway's own (batch items, video polls).
   */
  requestId?: string | null;
  /** `video`: a video job (server/services/videos), one row per job. */
  api: "chat" | "embeddings" | "video";
  modelId: string;
  providerSlug: string | null;
  endpointId: string | null;
  status: "success" | "error" | "cancelled";
  httpStatus: number;
  streamed: boolean;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /** Prompt tokens written to the provider's prompt cache (0 when absent). */
  cacheWriteTokens?: number;
  /** A guardrail's `flag` content filter matched the input (the call went through unchanged). */
  contentFlagged?: boolean;
  /**
   * Answered from the response cache (server/engine/response-cache): billed 0, with the original
   * call's token counts.
   */
  cacheHit?: boolean;
  /** For a cache hit, what the original call cost: what the hit saved (exact decimal USD). */
  cacheSavingsUsd?: string;
  /** A call admission refused with 429: the limit that refused it (quantities.ts LimitName); no provider was called. */
  rateLimit?: string;
  /** Exact decimal USD (money.ts costUsd). */
  costUsd: string;
  /** Paid with the caller's own provider key: counted as BYOK spend, apart from paid spend. */
  isByok: boolean;
  isFree: boolean;
  /** Upstream time to the first byte of the answer. */
  latencyMs: number | null;
  /** Upstream time to the end of the answer (from sending the request). */
  generationMs: number | null;
  /**
   * The exact budget reservation gateway_admit made for the call (video jobs), released by the
   * settlement; null under leases.
   */
  reservationId: string | null;
}

/** A ledger row as written: its id fixed when it is queued, so a retried write is idempotent. */
export interface LedgerRow {
  id: string;
  record: CallRecord;
  at: Date;
  consumptions: readonly Consumption[];
}

/** What a settled call used of one admission lease (server/engine/admission/lease-book.ts). */
export interface Consumption {
  quantity: string;
  windowStart: Date;
  /** Requests, or exact USD. */
  amount: string;
}

export function checkRecord(record: CallRecord): void {
  if (!isUsdDecimal(record.costUsd))
    throw new RangeError(`costUsd must be a non-negative decimal, got "${record.costUsd}"`);
}

// Data-modifying CTEs see one snapshot and commit together: ledger rows, spend counters, request
// counters, the leases the calls were admitted under and their exact reservations. `ins` returns only rows this
// statement inserted, and every counter and lease change is derived from it: a retried group
// changes nothing twice. Counters are upserted in key order so concurrent flushes of several
// instances lock them in the same order.
const NAMED_STATEMENT = `
  WITH rows AS (
    SELECT * FROM unnest($id::uuid[], $generationId::text[], $createdAt::timestamptz[], $organizationId::uuid[],
                         $keyHash::text[], $workspaceId::uuid[], $memberUserId::text[], $endUser::text[],
                         $sessionId::text[], $api::text[], $modelId::text[], $providerSlug::text[], $endpointId::text[],
                         $status::text[], $httpStatus::integer[], $streamed::boolean[], $promptTokens::integer[],
                         $completionTokens::integer[], $reasoningTokens::integer[], $cachedTokens::integer[],
                         $cost::numeric[], $isByok::boolean[], $isFree::boolean[], $latencyMs::integer[],
                         $generationMs::integer[], $daily::timestamptz[], $weekly::timestamptz[],
                         $monthly::timestamptz[], $reservationId::uuid[], $requestId::text[],
                         $cacheWriteTokens::integer[], $contentFlagged::boolean[], $cacheHit::boolean[],
                         $cacheSavings::numeric[], $rateLimit::text[])
      AS r(id, generation_id, created_at, organization_id, key_hash, workspace_id, member_user_id, end_user, session_id,
           api, model_id, provider_slug, endpoint_id, status, http_status, streamed, prompt_tokens, completion_tokens,
           reasoning_tokens, cached_tokens, cost_usd, is_byok, is_free, latency_ms, generation_ms, daily, weekly,
           monthly, reservation_id, request_id, cache_write_tokens, content_flagged, cache_hit, cache_savings_usd,
           rate_limit)
  ), ins AS (
    INSERT INTO usage_ledger (id, generation_id, created_at, organization_id, key_hash, workspace_id, member_user_id,
                              end_user, session_id, api, model_id, provider_slug, endpoint_id, status, http_status,
                              streamed, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, total_tokens,
                              cost_usd, is_byok, is_free, latency_ms, generation_ms, request_id, cache_write_tokens,
                              content_flagged, cache_hit, cache_savings_usd, rate_limit)
    SELECT id, generation_id, created_at, organization_id, key_hash, workspace_id, member_user_id, end_user, session_id,
           api, model_id, provider_slug, endpoint_id, status, http_status, streamed, prompt_tokens, completion_tokens,
           reasoning_tokens, cached_tokens, prompt_tokens + completion_tokens, cost_usd, is_byok, is_free, latency_ms,
           generation_ms, request_id, cache_write_tokens, content_flagged, cache_hit, cache_savings_usd, rate_limit
      FROM rows
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), spend AS (
    SELECT s.scope, s.scope_id, p.period, p.period_start,
           sum(CASE WHEN r.is_byok THEN 0 ELSE r.cost_usd END) AS paid,
           sum(CASE WHEN r.is_byok THEN r.cost_usd ELSE 0 END) AS byok
      FROM rows r JOIN ins USING (id)
     CROSS JOIN LATERAL (VALUES (1, 'key', r.key_hash::text), (2, 'workspace', r.workspace_id::text))
       AS s(n, scope, scope_id)
     CROSS JOIN LATERAL (VALUES ('daily', r.daily), ('weekly', r.weekly), ('monthly', r.monthly),
                                ('lifetime', 'epoch'::timestamptz)) AS p(period, period_start)
     WHERE r.cost_usd > 0
     GROUP BY s.scope, s.scope_id, p.period, p.period_start
  ), counters AS (
    INSERT INTO usage_counters AS c (scope, scope_id, period, period_start, spent_usd, byok_spent_usd)
    SELECT scope, scope_id, period, period_start, paid, byok FROM spend ORDER BY scope, scope_id, period, period_start
    ON CONFLICT (scope, scope_id, period, period_start) DO UPDATE
      SET spent_usd = c.spent_usd + EXCLUDED.spent_usd, byok_spent_usd = c.byok_spent_usd + EXCLUDED.byok_spent_usd
  ), used AS (
    SELECT u.quantity, u.window_start, sum(u.amount) AS amount
      FROM unnest($useRow::uuid[], $useQuantity::text[], $useStart::timestamptz[], $useAmount::numeric[])
        AS u(id, quantity, window_start, amount)
      JOIN ins USING (id)
     GROUP BY u.quantity, u.window_start
  ), leases AS (
    UPDATE admission_leases a SET granted = greatest(a.granted - used.amount, 0)
      FROM used WHERE a.owner = $owner AND a.quantity = used.quantity AND a.window_start = used.window_start
  ), requests AS (
    INSERT INTO request_counters AS c (name, window_start, count)
    SELECT quantity, window_start, amount::integer FROM used
     WHERE quantity LIKE 'rate:%' OR quantity LIKE 'free:%'
     ORDER BY quantity, window_start
    ON CONFLICT (name, window_start) DO UPDATE SET count = c.count + EXCLUDED.count
  ), released AS (
    DELETE FROM budget_reservations WHERE id IN (SELECT r.reservation_id FROM rows r JOIN ins USING (id))
  )
  SELECT count(*) AS inserted FROM ins`;

/** The statement's parameters, in the order of `$1`…`$n`. */
const LEDGER_PARAMETERS = [
  "id",
  "generationId",
  "createdAt",
  "organizationId",
  "keyHash",
  "workspaceId",
  "memberUserId",
  "endUser",
  "sessionId",
  "api",
  "modelId",
  "providerSlug",
  "endpointId",
  "status",
  "httpStatus",
  "streamed",
  "promptTokens",
  "completionTokens",
  "reasoningTokens",
  "cachedTokens",
  "cost",
  "isByok",
  "isFree",
  "latencyMs",
  "generationMs",
  "daily",
  "weekly",
  "monthly",
  "reservationId",
  "requestId",
  "cacheWriteTokens",
  "contentFlagged",
  "cacheHit",
  "cacheSavings",
  "rateLimit",
  "useRow",
  "useQuantity",
  "useStart",
  "useAmount",
  "owner",
] as const;

/**
 * Positional, so the write-behind writer can run it as one server-side prepared statement on its
 * own connection (settlement-writer.ts), parsed and planned once instead of at every group.
 */
const LEDGER_STATEMENT = NAMED_STATEMENT.replace(/\$([a-zA-Z]+)/g, (_, name: string) => {
  const index = (LEDGER_PARAMETERS as readonly string[]).indexOf(name);
  if (index < 0) throw new Error(`ledger statement parameter $${name} is not listed`);
  return `$${index + 1}`;
});

/**
 * Writes ledger rows with everything they move, in one statement: the one writer of the ledger
 * for live calls (queued by settlement-writer.ts) and for exact settlements (settleCall).
 * `owner` names the admission leases the rows' consumptions were admitted under.
 */
export async function writeLedgerRows(sequelize: Sequelize, owner: string, group: readonly LedgerRow[]): Promise<void> {
  await sequelize.query(LEDGER_STATEMENT, { bind: ledgerValues(owner, group) });
}

/**
 * The same statement for a group commit of the settlement writer, on its own connection, as a
 * prepared statement (parsed and planned once per connection).
 */
export async function writeLedgerGroup(
  client: pg.ClientBase,
  owner: string,
  group: readonly LedgerRow[],
): Promise<void> {
  await client.query({ name: "gateway_settle", text: LEDGER_STATEMENT, values: ledgerValues(owner, group) });
}

/** The values of LEDGER_STATEMENT's `$1`…`$n`, for a group of rows. */
function ledgerValues(owner: string, group: readonly LedgerRow[]): unknown[] {
  const column = <T>(pick: (row: LedgerRow) => T): T[] => group.map(pick);
  const start = (period: "daily" | "weekly" | "monthly") =>
    column((row) => currentPeriodStart(period, row.at).toISOString());
  const uses = group.flatMap((row) => row.consumptions.map((use) => ({ id: row.id, use })));
  const named: Record<(typeof LEDGER_PARAMETERS)[number], unknown> = {
    id: column((row) => row.id),
    generationId: column((row) => row.record.generationId),
    createdAt: column((row) => row.at.toISOString()),
    organizationId: column((row) => row.record.organizationId),
    keyHash: column((row) => row.record.keyHash),
    workspaceId: column((row) => row.record.workspaceId),
    memberUserId: column((row) => row.record.memberUserId),
    endUser: column((row) => row.record.endUser),
    sessionId: column((row) => row.record.sessionId),
    api: column((row) => row.record.api),
    modelId: column((row) => row.record.modelId),
    providerSlug: column((row) => row.record.providerSlug),
    endpointId: column((row) => row.record.endpointId),
    status: column((row) => row.record.status),
    httpStatus: column((row) => row.record.httpStatus),
    streamed: column((row) => row.record.streamed),
    promptTokens: column((row) => row.record.promptTokens),
    completionTokens: column((row) => row.record.completionTokens),
    reasoningTokens: column((row) => row.record.reasoningTokens),
    cachedTokens: column((row) => row.record.cachedTokens),
    cost: column((row) => row.record.costUsd),
    isByok: column((row) => row.record.isByok),
    isFree: column((row) => row.record.isFree),
    latencyMs: column((row) => row.record.latencyMs),
    generationMs: column((row) => row.record.generationMs),
    daily: start("daily"),
    weekly: start("weekly"),
    monthly: start("monthly"),
    reservationId: column((row) => row.record.reservationId),
    requestId: column((row) => row.record.requestId ?? null),
    cacheWriteTokens: column((row) => row.record.cacheWriteTokens ?? 0),
    contentFlagged: column((row) => row.record.contentFlagged ?? false),
    cacheHit: column((row) => row.record.cacheHit ?? false),
    cacheSavings: column((row) => row.record.cacheSavingsUsd ?? "0"),
    rateLimit: column((row) => row.record.rateLimit ?? null),
    useRow: uses.map((u) => u.id),
    useQuantity: uses.map((u) => u.use.quantity),
    useStart: uses.map((u) => u.use.windowStart.toISOString()),
    useAmount: uses.map((u) => u.use.amount),
    owner,
  };
  return LEDGER_PARAMETERS.map((name) => named[name]);
}

/**
 * Records a finished call at once (video jobs: exact settlement), with its real cost, the spend
 * counters, and the release of its reservation, atomically.
 */
export async function settleCall(sequelize: Sequelize, record: CallRecord, now: Date = new Date()): Promise<void> {
  checkRecord(record);
  await writeLedgerRows(sequelize, "", [{ id: randomUUID(), record, at: now, consumptions: [] }]);
}

/** Frees the budget held for a call that never reached a provider (refused, or failed before sending). */
export async function releaseReservation(sequelize: Sequelize, id: string): Promise<void> {
  await sequelize.query(`DELETE FROM budget_reservations WHERE id = $id::uuid`, { bind: { id } });
}

// Arrays, not one placeholder per counter, so the statement text is the same for any number of them.
const READ_COUNTERS = `
  SELECT r.i, coalesce(c.spent_usd, 0) AS paid, coalesce(c.byok_spent_usd, 0) AS byok
    FROM unnest($scopes::text[], $ids::text[], $periods::text[], $starts::timestamptz[])
         WITH ORDINALITY AS r(scope, scope_id, period, period_start, i)
    LEFT JOIN usage_counters c
      ON c.scope = r.scope AND c.scope_id = r.scope_id AND c.period = r.period AND c.period_start = r.period_start`;

/** The settled spend of each usage counter, in the order of `refs`; a counter without a row is zero. */
export async function readCounters(sequelize: Sequelize, refs: readonly CounterRef[]): Promise<Spend[]> {
  if (refs.length === 0) return [];
  const rows = await sequelize.query<{ i: string; paid: string; byok: string }>(READ_COUNTERS, {
    type: QueryTypes.SELECT,
    bind: {
      scopes: refs.map((r) => r.scope),
      ids: refs.map((r) => r.scopeId),
      periods: refs.map((r) => r.period),
      starts: refs.map((r) => r.periodStart.toISOString()),
    },
  });
  const spend: Spend[] = [];
  for (const row of rows) spend[Number(row.i) - 1] = { paidUsd: String(row.paid), byokUsd: String(row.byok) };
  return spend;
}

/**
 * A request counter of gateway_admit (rate-limit windows, free-model days) in the window that
 * starts at `windowStart`.
 */
export async function requestCount(sequelize: Sequelize, name: string, windowStart: Date): Promise<number> {
  const [row] = await sequelize.query<{ count: number }>(
    `SELECT count FROM request_counters WHERE name = $name AND window_start = $start`,
    {
      type: QueryTypes.SELECT,
      bind: { name, start: windowStart.toISOString() },
    },
  );
  return row?.count ?? 0;
}

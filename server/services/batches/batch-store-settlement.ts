import { QueryTypes, type Sequelize } from "sequelize";
import { storableJson } from "../../../wire/text-rules.js";
import { currentPeriodStart } from "../../engine/index.js";
import type { ItemResult } from "./batch-store.js";

/**
 * Records finished items, many at once. One statement per flush, so for every item whose lease
 * this instance still holds, these commit together or not at all: the item's result, its ledger
 * row, the key's and workspace's spend counters, the batch's counts and usage (and its terminal
 * status when the last item lands), and the release of the item's share of the batch's budget
 * reservation. An item whose lease was lost (another instance claimed it after a stall) is
 * skipped: its other run records it, so it is billed once. Counters are aggregated per row before
 * the upsert (one statement may not update a row twice) and taken key before workspace.
 */
export interface SettledItem {
  batchId: string;
  idx: number;
  /** The item id: ledger generation id and response request id. */
  itemId: string;
  succeeded: boolean;
  result: ItemResult;
  api: "chat" | "embeddings";
  modelId: string;
  providerSlug: string | null;
  endpointId: string | null;
  httpStatus: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /** Prompt tokens written to the provider's prompt cache (0 when absent). */
  cacheWriteTokens?: number;
  /** Exact decimal USD. */
  cost: string;
  isByok: boolean;
  isFree: boolean;
  latencyMs: number | null;
}

const SETTLE = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($items::jsonb) AS x(
      "batchId" text, idx integer, "itemId" text, succeeded boolean, result jsonb, api text, "modelId" text,
      "providerSlug" text, "endpointId" text, "httpStatus" integer, "promptTokens" integer, "completionTokens" integer,
      "reasoningTokens" integer, "cachedTokens" integer, cost numeric, "isByok" boolean, "isFree" boolean,
      "latencyMs" integer, "cacheWriteTokens" integer)
  ), done AS (
    UPDATE batch_items i
       SET state = 'done', succeeded = x.succeeded, result = x.result, lease_owner = NULL, lease_expires_at = NULL
      FROM input x
     WHERE i.batch_id = x."batchId" AND i.idx = x.idx AND i.state = 'running' AND i.lease_owner = $owner
    RETURNING i.batch_id, i.idx
  ), kept AS (
    SELECT x.*, b.organization_id, b.key_hash, b.workspace_id, b.member_user_id
      FROM input x
      JOIN done d ON d.batch_id = x."batchId" AND d.idx = x.idx
      JOIN batches b ON b.id = x."batchId"
  ), ledger AS (
    INSERT INTO usage_ledger (id, generation_id, created_at, organization_id, key_hash, workspace_id, member_user_id,
                              api, model_id, provider_slug, endpoint_id, status, http_status, streamed, prompt_tokens,
                              completion_tokens, reasoning_tokens, cached_tokens, total_tokens, cost_usd, is_byok,
                              is_free, latency_ms, generation_ms, batch_id, cache_write_tokens)
    SELECT gen_random_uuid(), "itemId", $now::timestamptz, organization_id, key_hash, workspace_id, member_user_id, api,
           "modelId", "providerSlug", "endpointId", CASE WHEN succeeded THEN 'success' ELSE 'error' END, "httpStatus",
           false, "promptTokens", "completionTokens", "reasoningTokens", "cachedTokens",
           "promptTokens" + "completionTokens", cost, "isByok", "isFree", "latencyMs", "latencyMs", "batchId",
           coalesce("cacheWriteTokens", 0)
      FROM kept
  ), spend AS (
    SELECT s.n, s.scope, s.scope_id, p.period, p.period_start,
           sum(CASE WHEN k."isByok" THEN 0 ELSE k.cost END) AS paid,
           sum(CASE WHEN k."isByok" THEN k.cost ELSE 0 END) AS byok
      FROM kept k
     CROSS JOIN LATERAL (VALUES (1, 'key', k.key_hash::text), (2, 'workspace', k.workspace_id::text))
       AS s(n, scope, scope_id)
     CROSS JOIN (VALUES ('daily', $daily::timestamptz), ('weekly', $weekly::timestamptz),
                        ('monthly', $monthly::timestamptz), ('lifetime', $lifetime::timestamptz))
                          AS p(period, period_start)
     WHERE k.cost > 0
     GROUP BY s.n, s.scope, s.scope_id, p.period, p.period_start
  ), counters AS (
    INSERT INTO usage_counters AS c (scope, scope_id, period, period_start, spent_usd, byok_spent_usd)
    SELECT scope, scope_id, period, period_start, paid, byok FROM spend ORDER BY n, scope_id, period
    ON CONFLICT (scope, scope_id, period, period_start) DO UPDATE
      SET spent_usd = c.spent_usd + EXCLUDED.spent_usd, byok_spent_usd = c.byok_spent_usd + EXCLUDED.byok_spent_usd
  ), totals AS (
    SELECT "batchId" AS batch_id, count(*) AS n,
           count(*) FILTER (WHERE succeeded) AS ok, count(*) FILTER (WHERE NOT succeeded) AS bad,
           sum("promptTokens") AS pt, sum("completionTokens") AS ct, sum("reasoningTokens") AS rt,
           sum("cachedTokens") AS cached,
           sum(CASE WHEN "isByok" THEN 0 ELSE cost END) AS paid, sum(CASE WHEN "isByok" THEN cost ELSE 0 END) AS byok
      FROM kept GROUP BY "batchId"
  ), finished AS (
    UPDATE batches b
       SET completed = b.completed + t.ok, failed = b.failed + t.bad,
           prompt_tokens = b.prompt_tokens + t.pt, completion_tokens = b.completion_tokens + t.ct,
           reasoning_tokens = b.reasoning_tokens + t.rt, cached_tokens = b.cached_tokens + t.cached,
           cost_usd = b.cost_usd + t.paid, byok_cost_usd = b.byok_cost_usd + t.byok,
           status = CASE WHEN b.completed + t.ok + b.failed + t.bad < b.total THEN b.status
                         WHEN b.status = 'cancelling' THEN 'cancelled' ELSE 'completed' END,
           finalized_at = CASE WHEN b.completed + t.ok + b.failed + t.bad < b.total THEN b.finalized_at ELSE now() END
      FROM totals t
     WHERE b.id = t.batch_id
    RETURNING b.id, b.status, b.reservation_id, b.item_estimate_usd, t.n
  ), released AS (
    UPDATE budget_reservations r
       SET amount_usd = CASE WHEN f.status IN ('completed', 'cancelled') THEN 0
                             ELSE greatest(0, r.amount_usd - f.item_estimate_usd * f.n) END
      FROM finished f
     WHERE r.id = f.reservation_id
  )
  SELECT count(*)::int AS recorded FROM done`;

/** Writes what it can; returns how many items this instance still held and recorded. */
export async function settleItems(
  sequelize: Sequelize,
  owner: string,
  items: SettledItem[],
  now = new Date(),
): Promise<number> {
  if (items.length === 0) return 0;
  const start = (period: "daily" | "weekly" | "monthly" | "lifetime") => currentPeriodStart(period, now).toISOString();
  const [row] = await sequelize.query<{ recorded: number }>(SETTLE, {
    type: QueryTypes.SELECT,
    bind: {
      // A provider's answer may hold what jsonb cannot (U+0000): stored with U+FFFD instead.
      items: storableJson(items),
      owner,
      now: now.toISOString(),
      daily: start("daily"),
      weekly: start("weekly"),
      monthly: start("monthly"),
      lifetime: start("lifetime"),
    },
  });
  return row?.recorded ?? 0;
}

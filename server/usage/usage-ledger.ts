import { randomUUID } from "node:crypto";
import type { Sequelize } from "sequelize";
import { isUsdDecimal } from "../core/money.js";
import { currentPeriodStart } from "./budget-layers.js";

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
  /** `video`: a video job (server/videos), one row per job. */
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
  /** Exact decimal USD (money.ts costUsd). */
  costUsd: string;
  /** Paid with the caller's own provider key: counted as BYOK spend, apart from paid spend. */
  isByok: boolean;
  isFree: boolean;
  /** Upstream time to the first byte of the answer. */
  latencyMs: number | null;
  /** Upstream time to the end of the answer (from sending the request). */
  generationMs: number | null;
  /** The budget reservation gateway_admit made for the call, released by the settlement. */
  reservationId: string | null;
}

// One statement, so the ledger row, the key's and the workspace's counters of every period and
// the release of the reservation commit together or not at all, in one round trip. Data-modifying
// CTEs run whether or not the final SELECT reads them. Counters are upserted key before workspace,
// always in this order, so concurrent settlements cannot deadlock; a free call touches none.
const SETTLE = `
  WITH ledger AS (
    INSERT INTO usage_ledger (id, generation_id, created_at, organization_id, key_hash, workspace_id, member_user_id,
                              end_user, session_id, api, model_id, provider_slug, endpoint_id, status, http_status,
                              streamed, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, total_tokens,
                              cost_usd, is_byok, is_free, latency_ms, generation_ms)
    VALUES ($id::uuid, $generationId::text, $now::timestamptz, $organizationId::uuid, $keyHash::text, $workspaceId::uuid,
            $memberUserId::text, $endUser::text, $sessionId::text, $api::text, $modelId::text, $providerSlug::text,
            $endpointId::text, $status::text, $httpStatus::integer, $streamed::boolean, $promptTokens::integer,
            $completionTokens::integer, $reasoningTokens::integer, $cachedTokens::integer, $totalTokens::integer,
            $cost::numeric, $isByok::boolean, $isFree::boolean, $latencyMs::integer, $generationMs::integer)
  ), counters AS (
    INSERT INTO usage_counters AS c (scope, scope_id, period, period_start, spent_usd, byok_spent_usd)
    SELECT s.scope, s.scope_id, p.period, p.period_start,
           CASE WHEN $isByok::boolean THEN 0 ELSE $cost::numeric END,
           CASE WHEN $isByok::boolean THEN $cost::numeric ELSE 0 END
      FROM (VALUES (1, 'key', $keyHash::text), (2, 'workspace', $workspaceId::uuid::text)) AS s(n, scope, scope_id)
     CROSS JOIN (VALUES ('daily', $daily::timestamptz), ('weekly', $weekly::timestamptz),
                        ('monthly', $monthly::timestamptz), ('lifetime', $lifetime::timestamptz)) AS p(period, period_start)
     WHERE $cost::numeric > 0
     ORDER BY s.n, p.period
    ON CONFLICT (scope, scope_id, period, period_start) DO UPDATE
      SET spent_usd = c.spent_usd + EXCLUDED.spent_usd, byok_spent_usd = c.byok_spent_usd + EXCLUDED.byok_spent_usd
  ), released AS (
    DELETE FROM budget_reservations WHERE id = $reservationId::uuid
  )
  SELECT 1`;

/**
 * Records a finished call (success, upstream error or cancellation) with its real cost, adds the
 * cost to the spend counters the budgets are checked against, and releases the call's reservation,
 * atomically.
 */
export async function settleCall(sequelize: Sequelize, record: CallRecord, now: Date = new Date()): Promise<void> {
  if (!isUsdDecimal(record.costUsd)) throw new RangeError(`costUsd must be a non-negative decimal, got "${record.costUsd}"`);
  const start = (period: "daily" | "weekly" | "monthly" | "lifetime") => currentPeriodStart(period, now).toISOString();
  await sequelize.query(SETTLE, {
    bind: {
      id: randomUUID(),
      generationId: record.generationId,
      now: now.toISOString(),
      organizationId: record.organizationId,
      keyHash: record.keyHash,
      workspaceId: record.workspaceId,
      memberUserId: record.memberUserId,
      endUser: record.endUser,
      sessionId: record.sessionId,
      api: record.api,
      modelId: record.modelId,
      providerSlug: record.providerSlug,
      endpointId: record.endpointId,
      status: record.status,
      httpStatus: record.httpStatus,
      streamed: record.streamed,
      promptTokens: record.promptTokens,
      completionTokens: record.completionTokens,
      reasoningTokens: record.reasoningTokens,
      cachedTokens: record.cachedTokens,
      totalTokens: record.promptTokens + record.completionTokens,
      cost: record.costUsd,
      isByok: record.isByok,
      isFree: record.isFree,
      latencyMs: record.latencyMs,
      generationMs: record.generationMs,
      reservationId: record.reservationId,
      daily: start("daily"),
      weekly: start("weekly"),
      monthly: start("monthly"),
      lifetime: start("lifetime"),
    },
  });
}

/** Frees the budget held for a call that never reached a provider (refused, or failed before sending). */
export async function releaseReservation(sequelize: Sequelize, id: string): Promise<void> {
  await sequelize.query(`DELETE FROM budget_reservations WHERE id = $id::uuid`, { bind: { id } });
}

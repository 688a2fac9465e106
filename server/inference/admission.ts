import { randomUUID } from "node:crypto";
import { QueryTypes } from "sequelize";
import { gatewayError } from "../core/errors.js";
import type { Deps } from "../deps.js";
import { budgetLayers } from "../usage/budget-layers.js";
import type { CallerContext } from "./caller-context.js";

/**
 * The admission step of every inference call, one round trip to `gateway_admit` (migration 0003):
 * the key's rate limit, the free-model daily quota, and the worst-case cost reserved against every
 * budget layer — the same layers GET /key shows (budget-layers.ts). Refusals: 429 with
 * Retry-After, or 402 naming the budget that is short.
 */
export interface Admission {
  /** Null when no budget applies, so nothing was reserved. */
  reservationId: string | null;
}

interface Verdict {
  admitted: boolean;
  refusal?: "rate_limit" | "free_quota" | "budget";
  retry_after_s?: number;
  label?: string;
  remaining_usd?: string | number;
}

/** Reservations of calls whose instance died lapse after this; longer than any call may run. */
const RESERVATION_SLACK_S = 300;

export interface AdmissionRequest {
  /** Worst-case cost to reserve (exact decimal USD). */
  estimateUsd: string;
  free: boolean;
  /** How long the reservation may live; a live call's deadline by default (a batch: its window). */
  reservationTtlS?: number;
}

export async function admit(deps: Deps, context: CallerContext, call: AdmissionRequest): Promise<Admission> {
  const { config, sequelize } = deps;
  const { key } = context.caller;
  const now = new Date();
  const layers = budgetLayers(key, context.guardrails, context.workspaceBudgets, context.workspace, now);
  const reservationId = layers.length > 0 ? randomUUID() : null;
  const [row] = await sequelize.query<{ verdict: Verdict }>("SELECT gateway_admit(:input::jsonb) AS verdict", {
    type: QueryTypes.SELECT,
    replacements: {
      input: JSON.stringify({
        key_hash: key.hash,
        workspace_id: key.workspaceId,
        rate_limit: config.rateLimitRequests,
        rate_window_s: config.rateLimitWindowSeconds,
        free: call.free,
        free_limit: config.freeModelDailyRequests,
        estimate_usd: call.estimateUsd,
        reservation_id: reservationId,
        reservation_ttl_s: (call.reservationTtlS ?? Math.ceil(config.requestTimeoutMs / 1000)) + RESERVATION_SLACK_S,
        budgets: layers.map((layer) => ({
          scope: layer.scope,
          scope_id: layer.scopeId,
          period: layer.period,
          period_start: layer.periodStart.toISOString(),
          limit_usd: layer.limitUsd,
          include_byok: layer.includeByok,
          label: layer.label,
        })),
      }),
    },
  });
  const verdict = row!.verdict;
  if (verdict.admitted) return { reservationId };
  const retryAfter = { "retry-after": String(Math.max(1, verdict.retry_after_s ?? 1)) };
  switch (verdict.refusal) {
    case "rate_limit":
      throw gatewayError(429, `Rate limit exceeded: at most ${config.rateLimitRequests} requests per ${config.rateLimitWindowSeconds} s for this key`, {
        retryable: true,
        headers: retryAfter,
      });
    case "free_quota":
      throw gatewayError(429, `Free-model daily request limit of ${config.freeModelDailyRequests} reached for this key`, { retryable: true, headers: retryAfter });
    default:
      throw gatewayError(
        402,
        `Insufficient budget: ${verdict.label} has $${Number(verdict.remaining_usd ?? 0)} left and this request may cost up to $${Number(call.estimateUsd)}; lower max_tokens or raise the limit`,
      );
  }
}

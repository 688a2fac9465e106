import { randomUUID } from "node:crypto";
import type { EngineParts } from "../engine.js";
import type { CallerContext } from "../inference/caller-context.js";
import { budgetLayers } from "../usage/budget-layers.js";
import { gatewayAdmit } from "./admission-store.js";
import { refusalError } from "./refusals.js";

/**
 * Exact admission, for what must hold a reservation longer than a lease lives (batch and video
 * submissions): one round trip to `gateway_admit` (migrations 0003, 0015), which counts the key's
 * rate limit and free-model quota and reserves the worst case against every budget layer — the
 * same layers GET /key shows (budget-layers.ts) — alongside the leases live calls draw on
 * (lease-book.ts). Refusals as refusals.ts words them.
 */
export interface Admission {
  /** Null when no budget applies, so nothing was reserved. */
  reservationId: string | null;
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

/** What exact admission reads: the limits, the database, and who is told of refusals. */
export type ExactAdmissionDeps = Pick<EngineParts, "config" | "sequelize" | "observers">;

export async function admit(
  deps: ExactAdmissionDeps,
  context: CallerContext,
  call: AdmissionRequest,
): Promise<Admission> {
  const { config, sequelize } = deps;
  const { key } = context.caller;
  const now = new Date();
  const layers = budgetLayers(key, context.guardrails, context.workspaceBudgets, context.workspace, now);
  const reservationId = layers.length > 0 ? randomUUID() : null;
  const verdict = await gatewayAdmit(sequelize, {
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
  });
  if (verdict.admitted) return { reservationId };
  const refusal = verdict.refusal ?? "budget";
  deps.observers?.admission?.refused(refusal);
  if (refusal !== "budget")
    deps.observers?.admission?.refusedBy(refusal === "free_quota" ? "free_model_requests" : "gateway_requests");
  throw refusalError({
    refusal,
    limit: String(verdict.refusal === "free_quota" ? config.freeModelDailyRequests : config.rateLimitRequests),
    windowS: config.rateLimitWindowSeconds,
    label: verdict.label ?? "",
    remainingUsd: String(verdict.remaining_usd ?? 0),
    estimateUsd: call.estimateUsd,
    retryAfterS: verdict.retry_after_s ?? null,
  });
}

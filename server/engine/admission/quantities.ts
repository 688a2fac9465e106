import type { Interval } from "../../platform/core/budget-periods.js";
import { nextReset } from "../../platform/core/budget-periods.js";
import type { ApiKeyRow } from "../../platform/db/models.js";
import type { ApplyingGuardrail } from "../governance/applying-guardrails.js";
import { type BudgetKey, budgetLayers, currentPeriodStart } from "../usage/budget-layers.js";

/**
 * The limited quantities one inference call draws on, each leased separately (lease-book.ts):
 * the key's rate-limit window, its free-model day (free calls only), and every spend counter a
 * budget layer reads. Layers that read the same counter (a key's daily credit limit and a daily
 * guardrail budget) share one quantity with several limits, so one lease covers them all.
 */
export type Refusal = "rate_limit" | "free_quota" | "budget";

export interface QuantityLimit {
  /** Requests, or USD as an exact decimal. */
  limit: string;
  /** Whether BYOK spend counts against it (spend only). */
  includeByok: boolean;
  /** Names the limit in a refusal. */
  label: string;
}

export interface Quantity {
  /** admission_leases.quantity: `rate:<hash>`, `free:<hash>`, `key:<hash>:<period>`, `workspace:<id>:<period>`. */
  name: string;
  windowStart: Date;
  /** The lease cannot outlive its window; null for lifetime counters. */
  windowEnd: Date | null;
  kind: "requests" | "spend";
  /** usage_counters address (spend only). */
  scope: "key" | "workspace" | null;
  scopeId: string;
  period: Interval | null;
  limits: QuantityLimit[];
  refusal: Refusal;
  /** The lock group a grant runs under: the workspace, and the key unless the quantity is the workspace's. */
  keyHash: string | null;
  workspaceId: string;
}

export interface QuantityLimits {
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  freeModelDailyRequests: number;
}

/**
 * What a call's quantities are read from: the key and what governs it, as plain data (a
 * CallerContext is one), so that the table test builds them without a database.
 */
export interface QuantitySource {
  caller: { key: BudgetKey & Pick<ApiKeyRow, "workspaceId"> };
  guardrails: readonly ApplyingGuardrail[];
  workspaceBudgets: Parameters<typeof budgetLayers>[2];
  workspace: Parameters<typeof budgetLayers>[3];
}

export function quantitiesFor(context: QuantitySource, limits: QuantityLimits, free: boolean, now: Date): Quantity[] {
  const { key } = context.caller;
  const quantities: Quantity[] = [];
  const requests = (name: string, windowStart: Date, windowEnd: Date, limit: number, label: string, refusal: Refusal): Quantity => ({
    name,
    windowStart,
    windowEnd,
    kind: "requests",
    scope: null,
    scopeId: key.hash,
    period: null,
    limits: [{ limit: String(limit), includeByok: false, label }],
    refusal,
    keyHash: key.hash,
    workspaceId: key.workspaceId,
  });
  if (limits.rateLimitRequests > 0) {
    const windowMs = limits.rateLimitWindowSeconds * 1000;
    const start = Math.floor(now.getTime() / windowMs) * windowMs;
    quantities.push(requests(`rate:${key.hash}`, new Date(start), new Date(start + windowMs), limits.rateLimitRequests, "rate limit", "rate_limit"));
  }
  if (free) {
    const day = currentPeriodStart("daily", now);
    quantities.push(requests(`free:${key.hash}`, day, nextReset("daily", now)!, limits.freeModelDailyRequests, "free-model daily requests", "free_quota"));
  }
  const spend = new Map<string, Quantity>();
  for (const layer of budgetLayers(key, context.guardrails, context.workspaceBudgets, context.workspace, now)) {
    const name = `${layer.scope}:${layer.scopeId}:${layer.period}`;
    let quantity = spend.get(name);
    if (!quantity) {
      quantity = {
        name,
        windowStart: layer.periodStart,
        windowEnd: nextReset(layer.period, now),
        kind: "spend",
        scope: layer.scope,
        scopeId: layer.scopeId,
        period: layer.period,
        limits: [],
        refusal: "budget",
        keyHash: layer.scope === "key" ? key.hash : null,
        workspaceId: key.workspaceId,
      };
      spend.set(name, quantity);
      quantities.push(quantity);
    }
    quantity.limits.push({ limit: layer.limitUsd, includeByok: layer.includeByok, label: layer.label });
  }
  return quantities;
}

/** The request rate limit's quantity (`rate:…`): what a response cache hit still counts against. */
export function isRateLimit(quantity: Quantity): boolean {
  return quantity.kind === "requests" && quantity.name.startsWith("rate:");
}

import { periodStart, type Interval } from "../money/budget-periods.js";
import { microsToUsdDecimal } from "../money/money.js";
import type { ApiKeyRow, WorkspaceBudgetRow, WorkspaceRow } from "../../platform/db/models.js";
import type { ApplyingGuardrail, GuardrailPath } from "../governance/applying-guardrails.js";
import { byWidth } from "./budget-order.js";

/**
 * Every spending limit on a key, as one list that both admission (`gateway_admit`, the 402) and
 * GET /key read, so the refusal and what the key reports can never disagree.
 */
export interface BudgetLayer {
  /** Whose spend counts against the limit: the key's alone, or its whole workspace's. */
  scope: "key" | "workspace";
  /** usage_counters.scope_id: the key hash or the workspace id. */
  scopeId: string;
  period: Interval;
  /** Start of the current period; the epoch for lifetime limits. */
  periodStart: Date;
  limitMicros: string;
  /** The limit as an exact decimal, as `gateway_admit` compares it. */
  limitUsd: string;
  /** Whether BYOK spend counts against this limit too. */
  includeByok: boolean;
  /** Names the layer in a 402 message. */
  label: string;
  /** How GET /key shows the budget: a guardrail's keeps the path by which it reaches the key. */
  budgetScope: "key" | GuardrailPath;
  guardrailId: string | null;
  budgetId: string | null;
}

/** Lifetime counters and limits start at the epoch. */
export const LIFETIME_START = new Date(0);

export type BudgetKey = Pick<ApiKeyRow, "hash" | "limitMicros" | "limitReset" | "includeByokInLimit">;

/** A key's credit limit resets with `limit_reset`; without one it is a lifetime limit. */
export function keyLimitPeriod(key: Pick<ApiKeyRow, "limitReset">): Interval {
  return (key.limitReset ?? "lifetime") as Interval;
}

export function currentPeriodStart(period: Interval, now: Date): Date {
  return periodStart(period, now) ?? LIFETIME_START;
}

/**
 * Narrowest first: the key's own limit, then the guardrails that reach it (key, member, workspace
 * path; each guardrail budget limits every key it reaches on its own), then the workspace budgets
 * (daily to lifetime), which all keys of the workspace share.
 */
export function budgetLayers(
  key: BudgetKey,
  guardrails: readonly ApplyingGuardrail[],
  workspaceBudgets: readonly Pick<WorkspaceBudgetRow, "id" | "interval" | "limitMicros">[],
  workspace: Pick<WorkspaceRow, "id" | "includeByokInBudgets">,
  now: Date,
): BudgetLayer[] {
  const layer = (l: Omit<BudgetLayer, "periodStart" | "limitUsd">): BudgetLayer => ({
    ...l,
    periodStart: currentPeriodStart(l.period, now),
    limitUsd: microsToUsdDecimal(l.limitMicros),
  });
  const layers: BudgetLayer[] = [];
  if (key.limitMicros !== null) {
    const period = keyLimitPeriod(key);
    layers.push(
      layer({
        scope: "key",
        scopeId: key.hash,
        period,
        limitMicros: key.limitMicros,
        includeByok: key.includeByokInLimit,
        label: `the API key's ${period} credit limit`,
        budgetScope: "key",
        guardrailId: null,
        budgetId: null,
      }),
    );
  }
  for (const guardrail of guardrails) {
    if (guardrail.limitMicros === null) continue;
    const period = guardrail.resetInterval ?? "lifetime";
    layers.push(
      layer({
        scope: "key",
        scopeId: key.hash,
        period,
        limitMicros: guardrail.limitMicros,
        includeByok: guardrail.includeByokInBudgets,
        label: `the ${period} budget of guardrail ${guardrail.id}`,
        budgetScope: guardrail.path,
        guardrailId: guardrail.id,
        budgetId: null,
      }),
    );
  }
  for (const budget of [...workspaceBudgets].sort(byWidth)) {
    const period = budget.interval as Interval;
    layers.push(
      layer({
        scope: "workspace",
        scopeId: workspace.id,
        period,
        limitMicros: budget.limitMicros,
        includeByok: workspace.includeByokInBudgets,
        label: `the workspace's ${period} budget`,
        budgetScope: "workspace",
        guardrailId: null,
        budgetId: budget.id,
      }),
    );
  }
  return layers;
}

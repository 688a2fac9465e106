import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  BudgetIntervalSchema,
  BudgetScopeSchema,
  BudgetSchema,
  DataRegionSchema,
  ResetIntervalSchema,
  type Budget,
  type DataRegion,
} from "../../../gen/gateway/v1/common_pb.js";
import { ApiKeySchema, CurrentKeySchema, type ApiKey, type CurrentKey } from "../../../gen/gateway/v1/keys_pb.js";
import {
  NO_PERIOD_SPEND,
  countedSpend,
  keyLimitPeriod,
  layerSpendUsd,
  microsToUsdDecimal,
  nextReset,
  remainingUsd,
  svcRateLimitOf,
  usdNumber,
} from "../../engine/index.js";
import { optionalTimestamp } from "../../platform/rpc/timestamps.js";
import { enumFromStored, wireNames } from "../../../wire/enums.js";
import type { ApiKeyRow, OrganizationRow } from "../../platform/db/models.js";
import type { ApplyingGuardrail } from "../../engine/governance/applying-guardrails.js";
import type { BudgetLayer } from "../../engine/usage/budget-layers.js";
import type { PeriodSpend, SpendIndex } from "../../engine/usage/usage-counters.js";

/**
 * Key records as the API shows them. Usage figures are the settled spend of the usage counters in
 * the periods that contain now; budgets are the layers that admission checks (budget-layers.ts),
 * with their spend counted the same way.
 */
export function toApiKey(row: ApiKeyRow, usage: PeriodSpend = NO_PERIOD_SPEND): ApiKey {
  const limitUsd = row.limitMicros === null ? undefined : microsToUsdDecimal(row.limitMicros);
  const limitSpend = countedSpend(usage[keyLimitPeriod(row)], row.includeByokInLimit);
  return create(ApiKeySchema, {
    hash: row.hash,
    name: row.name,
    label: row.label,
    disabled: row.disabled,
    limit: limitUsd === undefined ? undefined : usdNumber(limitUsd),
    limitRemaining: limitUsd === undefined ? undefined : usdNumber(remainingUsd(limitUsd, limitSpend)),
    limitReset: enumFromStored(ResetIntervalSchema, row.limitReset),
    includeByokInLimit: row.includeByokInLimit,
    ...usageFields(usage),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: optionalTimestamp(row.updatedAt),
    expiresAt: optionalTimestamp(row.expiresAt),
    creatorUserId: row.creatorUserId ?? undefined,
    workspaceId: row.workspaceId,
    isManagementKey: row.isManagement,
    svcRateLimit: svcRateLimitOf(row),
  });
}

/** The usage fields that ApiKey and CurrentKey share. */
function usageFields(usage: PeriodSpend) {
  return {
    usage: usdNumber(usage.lifetime.paidUsd),
    usageDaily: usdNumber(usage.daily.paidUsd),
    usageWeekly: usdNumber(usage.weekly.paidUsd),
    usageMonthly: usdNumber(usage.monthly.paidUsd),
    byokUsage: usdNumber(usage.lifetime.byokUsd),
    byokUsageDaily: usdNumber(usage.daily.byokUsd),
    byokUsageWeekly: usdNumber(usage.weekly.byokUsd),
    byokUsageMonthly: usdNumber(usage.monthly.byokUsd),
  };
}

export interface CurrentKeyContext {
  key: ApiKeyRow;
  organization: OrganizationRow;
  /** budgetLayers of the key, narrowest first. */
  layers: BudgetLayer[];
  /** Holds the key's and its workspace's counters of the current periods. */
  spend: SpendIndex;
  /** Guardrails that reach the key, narrowest path first (see guardrailsApplyingTo). */
  guardrails: ApplyingGuardrail[];
  freeModelDailyRequests: { limit: number; used: number };
  now: Date;
}

export function toCurrentKey({
  key,
  organization,
  layers,
  spend,
  guardrails,
  freeModelDailyRequests,
  now,
}: CurrentKeyContext): CurrentKey {
  const managed = toApiKey(key, spend.periods("key", key.hash, now));
  const budgets = layers.map((layer) => toBudget(layer, layerSpendUsd(layer, spend), now));
  const { limit, used } = freeModelDailyRequests;
  return create(CurrentKeySchema, {
    label: managed.label,
    limit: managed.limit,
    limitRemaining: managed.limitRemaining,
    limitReset: managed.limitReset,
    usage: managed.usage,
    usageDaily: managed.usageDaily,
    usageWeekly: managed.usageWeekly,
    usageMonthly: managed.usageMonthly,
    byokUsage: managed.byokUsage,
    byokUsageDaily: managed.byokUsageDaily,
    byokUsageWeekly: managed.byokUsageWeekly,
    byokUsageMonthly: managed.byokUsageMonthly,
    includeByokInLimit: managed.includeByokInLimit,
    isFreeTier: false,
    isManagementKey: key.isManagement,
    // "Provisioning key" is the older name of a management key.
    isProvisioningKey: key.isManagement,
    expiresAt: managed.expiresAt,
    creatorUserId: managed.creatorUserId,
    organizationId: organization.id,
    workspaceId: key.workspaceId,
    allowedDataRegions: allowedDataRegions(guardrails),
    freeModelDailyRequests: { limit, used, remaining: Math.max(0, limit - used) },
    rateLimit: {
      interval: "10s",
      requests: -1,
      note: "Deprecated: rate limits are enforced per key and answered with 429.",
    },
    budgets,
    effectiveBudget: bindingBudget(budgets),
    svcRateLimit: managed.svcRateLimit,
  });
}

function toBudget(layer: BudgetLayer, spentUsd: string, now: Date): Budget {
  return create(BudgetSchema, {
    budgetId: layer.budgetId ?? undefined,
    guardrailId: layer.guardrailId ?? undefined,
    includeByok: layer.includeByok,
    limitUsd: usdNumber(layer.limitUsd),
    spendUsd: usdNumber(spentUsd),
    remainingUsd: usdNumber(remainingUsd(layer.limitUsd, spentUsd)),
    resetInterval: enumFromStored(BudgetIntervalSchema, layer.period),
    resetsAt: optionalTimestamp(nextReset(layer.period, now)),
    scope: enumFromStored(BudgetScopeSchema, layer.budgetScope),
  });
}

/** Every guardrail that restricts regions narrows the set; with none, every region is allowed. */
function allowedDataRegions(guardrails: ApplyingGuardrail[]): DataRegion[] {
  let allowed = wireNames(DataRegionSchema);
  for (const { allowedDataRegions: only } of guardrails) {
    if (only !== null) allowed = allowed.filter((region) => only.includes(region));
  }
  return allowed.map((region) => enumFromStored(DataRegionSchema, region));
}

/** The budget that runs out first binds; ties go to the narrower layer listed first. */
function bindingBudget(budgets: Budget[]): Budget | undefined {
  return budgets.reduce<Budget | undefined>(
    (best, b) => (!best || b.remainingUsd < best.remainingUsd ? b : best),
    undefined,
  );
}

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { BudgetIntervalSchema, BudgetScope, BudgetScopeSchema, BudgetSchema, DataRegionSchema, ResetIntervalSchema, type Budget, type DataRegion } from "../../gen/gateway/v1/common_pb.js";
import { ApiKeySchema, CurrentKeySchema, type ApiKey, type CurrentKey } from "../../gen/gateway/v1/keys_pb.js";
import { nextReset, type Interval } from "../core/budget-periods.js";
import { microsToUsd } from "../core/money.js";
import { optionalTimestamp } from "../core/timestamps.js";
import { enumFromStored, wireNames } from "../core/wire-enums.js";
import type { ApiKeyRow, OrganizationRow, WorkspaceBudgetRow, WorkspaceRow } from "../db/models.js";
import type { ApplyingGuardrail } from "../guardrails/applying-guardrails.js";

/**
 * Key records as the API shows them. Usage figures are zero until the inference usage ledger
 * exists; every other figure comes from the stored rows.
 */
export function toApiKey(row: ApiKeyRow): ApiKey {
  const limit = row.limitMicros === null ? undefined : microsToUsd(row.limitMicros);
  return create(ApiKeySchema, {
    hash: row.hash,
    name: row.name,
    label: row.label,
    disabled: row.disabled,
    limit,
    limitRemaining: limit,
    limitReset: enumFromStored(ResetIntervalSchema, row.limitReset),
    includeByokInLimit: row.includeByokInLimit,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: optionalTimestamp(row.updatedAt),
    expiresAt: optionalTimestamp(row.expiresAt),
    creatorUserId: row.creatorUserId ?? undefined,
    workspaceId: row.workspaceId,
    isManagementKey: row.isManagement,
  });
}

export interface CurrentKeyContext {
  key: ApiKeyRow;
  organization: OrganizationRow;
  workspace: WorkspaceRow;
  workspaceBudgets: WorkspaceBudgetRow[];
  /** Guardrails that reach the key, narrowest path first (see guardrailsApplyingTo). */
  guardrails: ApplyingGuardrail[];
  freeModelDailyRequests: number;
  now: Date;
}

export function toCurrentKey({ key, organization, workspace, workspaceBudgets, guardrails, freeModelDailyRequests, now }: CurrentKeyContext): CurrentKey {
  const managed = toApiKey(key);
  // Narrowest layer first, so that ties in bindingBudget go to it.
  const budgets = [
    ...(key.limitMicros === null ? [] : [keyBudget(key, now)]),
    ...guardrails.flatMap((guardrail) => (guardrail.limitMicros === null ? [] : [guardrailBudget(guardrail, guardrail.limitMicros, now)])),
    ...workspaceBudgets.map((row) => workspaceBudget(row, workspace, now)),
  ];
  return create(CurrentKeySchema, {
    label: managed.label,
    limit: managed.limit,
    limitRemaining: managed.limitRemaining,
    limitReset: managed.limitReset,
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
    freeModelDailyRequests: { limit: freeModelDailyRequests, remaining: freeModelDailyRequests, used: 0 },
    rateLimit: { interval: "10s", requests: -1, note: "Deprecated: rate limits are enforced per key and answered with 429." },
    budgets,
    effectiveBudget: bindingBudget(budgets),
  });
}

/** A key's own credit limit as a budget; a limit without reset interval is a lifetime limit. */
function keyBudget(key: ApiKeyRow, now: Date): Budget {
  const interval = (key.limitReset ?? "lifetime") as Interval;
  return budget({ interval, limitMicros: key.limitMicros ?? "0", includeByok: key.includeByokInLimit, scope: BudgetScope.KEY, now });
}

/** A guardrail's budget applies to each key it reaches; without an interval it is a lifetime budget. */
function guardrailBudget(guardrail: ApplyingGuardrail, limitMicros: string, now: Date): Budget {
  return budget({
    interval: guardrail.resetInterval ?? "lifetime",
    limitMicros,
    includeByok: guardrail.includeByokInBudgets,
    scope: enumFromStored(BudgetScopeSchema, guardrail.path),
    guardrailId: guardrail.id,
    now,
  });
}

function workspaceBudget(row: WorkspaceBudgetRow, workspace: WorkspaceRow, now: Date): Budget {
  return budget({
    interval: row.interval as Interval,
    limitMicros: row.limitMicros,
    includeByok: workspace.includeByokInBudgets,
    scope: BudgetScope.WORKSPACE,
    budgetId: row.id,
    now,
  });
}

function budget(b: {
  interval: Interval;
  limitMicros: string;
  includeByok: boolean;
  scope: BudgetScope;
  budgetId?: string;
  guardrailId?: string;
  now: Date;
}): Budget {
  const limitUsd = microsToUsd(b.limitMicros);
  const spendUsd = 0;
  return create(BudgetSchema, {
    budgetId: b.budgetId,
    guardrailId: b.guardrailId,
    includeByok: b.includeByok,
    limitUsd,
    spendUsd,
    remainingUsd: Math.max(0, limitUsd - spendUsd),
    resetInterval: enumFromStored(BudgetIntervalSchema, b.interval),
    resetsAt: optionalTimestamp(nextReset(b.interval, b.now)),
    scope: b.scope,
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
  return budgets.reduce<Budget | undefined>((best, b) => (!best || b.remainingUsd < best.remainingUsd ? b : best), undefined);
}

/**
 * Request fields of a guardrail as stored columns. Create and update carry the same field names,
 * so one table serves both: create stores every policy field (absent ones get their default),
 * update only the fields its mask names. An empty list and null are the same "no list" (stored null).
 *
 * @module
 */
import type { CreationAttributes } from "sequelize";
import { DataRegionSchema, ResetIntervalSchema } from "../../../gen/gateway/v1/common_pb.js";
import type {
  CreateGuardrailRequest,
  GuardrailContentFilterBuiltin,
  UpdateGuardrailRequest,
} from "../../../gen/gateway/v1/guardrails_pb.js";
import type { JsonObject } from "@bufbuild/protobuf";
import { gatewayError } from "../../../wire/errors.js";
import { wireName, wireNamesOf } from "../../../wire/enums.js";
import type { GuardrailRow, StoredContentFilterBuiltin } from "../../platform/db/governance-models.js";
import { AnalysisBudget, checkBuiltin, checkCustomFilter } from "../../engine/index.js";

type PolicyRequest = CreateGuardrailRequest | UpdateGuardrailRequest;
export type GuardrailColumns = Partial<CreationAttributes<GuardrailRow>>;

const POLICY_COLUMNS: Record<string, (req: PolicyRequest) => GuardrailColumns> = {
  description: (r) => ({ description: r.description ?? null }),
  include_byok_in_budgets: (r) => ({ includeByokInBudgets: r.includeByokInBudgets ?? false }),
  allowed_models: (r) => ({ allowedModels: storedList(r.allowedModels) }),
  ignored_models: (r) => ({ ignoredModels: storedList(r.ignoredModels) }),
  allowed_providers: (r) => ({ allowedProviders: storedList(r.allowedProviders) }),
  ignored_providers: (r) => ({ ignoredProviders: storedList(r.ignoredProviders) }),
  allowed_data_regions: (r) => ({
    allowedDataRegions: storedList(wireNamesOf(DataRegionSchema, r.allowedDataRegions)),
  }),
  enforce_zdr: (r) => ({ enforceZdr: r.enforceZdr ?? null }),
  enforce_zdr_anthropic: (r) => ({ enforceZdrAnthropic: r.enforceZdrAnthropic ?? null }),
  enforce_zdr_google: (r) => ({ enforceZdrGoogle: r.enforceZdrGoogle ?? null }),
  enforce_zdr_openai: (r) => ({ enforceZdrOpenai: r.enforceZdrOpenai ?? null }),
  enforce_zdr_other: (r) => ({ enforceZdrOther: r.enforceZdrOther ?? null }),
  enforce_zdr_xai: (r) => ({ enforceZdrXai: r.enforceZdrXai ?? null }),
  enable_free_model_publication: (r) => ({ enableFreeModelPublication: r.enableFreeModelPublication ?? false }),
  enable_free_model_training: (r) => ({ enableFreeModelTraining: r.enableFreeModelTraining ?? false }),
  enable_paid_model_training: (r) => ({ enablePaidModelTraining: r.enablePaidModelTraining ?? false }),
  content_filter_builtins: (r) => ({ contentFilterBuiltins: storedBuiltins(r.contentFilterBuiltins) }),
  content_filters: (r) => ({ contentFilters: storedCustomFilters(r.contentFilters) }),
};

/** Every policy field of a create request, defaults included. */
export function createdColumns(req: CreateGuardrailRequest): GuardrailColumns {
  return policyColumns(req, Object.keys(POLICY_COLUMNS));
}

/** The policy fields an update names (name and the budget are handled by their own rules). */
export function policyColumns(req: PolicyRequest, fields: Iterable<string>): GuardrailColumns {
  const columns: GuardrailColumns = {};
  for (const field of fields) Object.assign(columns, POLICY_COLUMNS[field]?.(req));
  return columns;
}

/**
 * A budget is a limit with an optional reset interval; a limit without one is a one-time
 * (lifetime) budget, and an interval without a limit means nothing, so it is refused.
 */
export function budgetColumns(limitMicros: string | null, resetInterval: string | null): GuardrailColumns {
  if (resetInterval !== null && limitMicros === null) throw gatewayError(400, "reset_interval requires limit_usd");
  return { limitMicros, resetInterval };
}

export function storedResetInterval(interval: number): string | null {
  return wireName(ResetIntervalSchema, interval) ?? null;
}

function storedList<T>(values: T[]): T[] | null {
  return values.length === 0 ? null : [...new Set(values)];
}

/** One entry per detector; an empty label becomes the detector's placeholder ("email" → "[EMAIL]"). */
function storedBuiltins(builtins: GuardrailContentFilterBuiltin[]): StoredContentFilterBuiltin[] {
  const seen = new Set<string>();
  return builtins.map(({ slug, label, action }) => {
    if (seen.has(slug)) throw gatewayError(400, `content_filter_builtins names slug '${slug}' more than once`);
    seen.add(slug);
    checkBuiltin({ slug, action });
    return { slug, label: label || `[${slug.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}]`, action };
  });
}

/** Each custom filter checked (its RE2 pattern compiles, within the cost limits) before it is stored as given. */
function storedCustomFilters(filters: JsonObject[]): JsonObject[] | null {
  const budget = new AnalysisBudget();
  filters.forEach((filter, index) => checkCustomFilter(filter, index, budget));
  return filters.length === 0 ? null : filters;
}

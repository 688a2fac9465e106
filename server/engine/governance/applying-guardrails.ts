import type { ContentFilter } from "../content-filters/content-filter.js";

/**
 * The guardrails that govern one key, each once, with the narrowest way it reaches the key: an
 * assignment to the key itself, to the member who created the key, or being the default guardrail
 * of the key's workspace. Budgets for GET /key and admission; the routing policy (models,
 * providers, data regions, ZDR, training) for the models list and the request router, which read
 * it through server/engine/governance/endpoint-policy.ts. Read by `guardrailsApplyingTo`
 * (applying-guardrails-store.ts).
 */
export type GuardrailPath = "key" | "member" | "workspace";

export interface ApplyingGuardrail {
  id: string;
  name: string;
  limitMicros: string | null;
  resetInterval: "daily" | "weekly" | "monthly" | null;
  includeByokInBudgets: boolean;
  allowedModels: string[] | null;
  ignoredModels: string[] | null;
  allowedProviders: string[] | null;
  ignoredProviders: string[] | null;
  allowedDataRegions: string[] | null;
  enforceZdr: boolean | null;
  enforceZdrAnthropic: boolean | null;
  enforceZdrGoogle: boolean | null;
  enforceZdrOpenai: boolean | null;
  enforceZdrOther: boolean | null;
  enforceZdrXai: boolean | null;
  enableFreeModelTraining: boolean;
  enablePaidModelTraining: boolean;
  /** Compiled once per version of the guardrail's filters (content-filters/guardrail-filters.ts); empty for most. */
  contentFilters: readonly ContentFilter[];
  path: GuardrailPath;
}

/**
 * The engine's face: everything the services may use of the engine at run time, and nothing else
 * (the layer test, test/architecture/layers.unit.test.ts, holds services to it; types they may
 * still import from the module that declares them). Engine modules never import this file.
 *
 * The verbs are the {@link Engine}'s: `callerContext`, `plan`, `tryEndpoints`, `open`, `reserve`.
 * The rest are the gateway's rules that services apply to their own records: the catalog's
 * lookups, money, usage and budgets, governance, content filters, the providers' registry, and
 * the inference pipelines the inference service's methods run. docs/architecture.md draws it.
 *
 * @module
 */

// The engine and its verbs.
export { Engine } from "./engine.js";
export { isServed } from "./inference/endpoint-attempts.js";

// Inference pipelines (the inference and decisions services' methods run them).
export { chatCompletions } from "./inference/chat-completions.js";
export { createEmbeddings } from "./inference/embeddings.js";
export { MESSAGES_API, RESPONSES_API, translatedChat } from "./inference/translated-chat.js";
export { chatToMessage, messagesToChat } from "./inference/formats/messages-format.js";
export { chatToResponse, responsesToChat } from "./inference/formats/responses-format.js";
export { sessionIdOf, withExtraBody, withoutGatewayFields } from "./inference/request-fields.js";
export { validateChatRequest, validateEmbeddingRequest } from "./inference/request-validators.js";
export { estimatePromptTokens, worstCaseCost } from "./inference/cost-estimate.js";
export { usedTokens, worstCaseTokens } from "./inference/token-estimate.js";
export { NO_USAGE } from "./inference/call-ledger.js";
export { isRetryable, toGatewayError } from "./inference/upstream-errors.js";
export { affinityOf } from "./key-pools/key-pools.js";

// Admission: limits, refusals, exact reservations' release.
export { isRateWindow, quantitiesFor } from "./admission/quantities.js";
export { rateLimitColumns, svcRateLimitOf } from "./admission/rate-limit-settings.js";
export { isFinalRefusal, refusedLimit } from "./admission/refusals.js";

// The catalog.
export { isFreeEndpoint } from "./catalog/catalog.js";
export { compareDecimals, comparePricing } from "./catalog/decimal-price.js";
export { NO_STATS, endpointStats } from "./catalog/endpoint-stats.js";
export { MODEL_ID, findCatalogModel } from "./catalog/model-lookup.js";
export { privateEndpointsOf } from "./catalog/private-endpoint-catalog.js";
export { SKU_PER_SECOND, SKU_PER_VIDEO, findVideoModel } from "./catalog/video-models.js";

// Governance.
export { guardrailsApplyingTo } from "./governance/applying-guardrails-store.js";
export { UNRESTRICTED, allowedEndpoints, policyOf, regionalHostnameOf } from "./governance/endpoint-policy.js";
export { assertAddressable, assertTrackingString } from "./governance/tracking-string.js";

// Content filters.
export { filterCall } from "./content-filters/call-filters.js";
export { checkBuiltin, checkCustomFilter } from "./content-filters/content-filter.js";
export { isContentTooLarge } from "./content-filters/filter-budget.js";
export { countFiltering, logFlags } from "./content-filters/filter-reports.js";
export { AnalysisBudget } from "./content-filters/pattern-cost.js";
export { blockedError } from "./content-filters/request-content.js";

// Money, usage and budgets.
export {
  addUsd,
  costUsd,
  microsToUsd,
  microsToUsdDecimal,
  multiplyUsd,
  remainingUsd,
  storedUsd,
  usdNumber,
} from "./money/money.js";
export { nextReset } from "./money/budget-periods.js";
export { budgetLayers, currentPeriodStart, keyLimitPeriod } from "./usage/budget-layers.js";
export { assertBudgetOrder, byWidth } from "./usage/budget-order.js";
export {
  NO_PERIOD_SPEND,
  countedSpend,
  currentPeriodRefs,
  freeModelRequestsToday,
  keyUsage,
  keysUsage,
  layerSpendUsd,
  readSpend,
} from "./usage/usage-counters.js";
export { releaseReservation, settleCall } from "./usage/usage-store.js";

// Providers.
export { UpstreamError } from "./providers/provider.js";
export { providerFor, requiredPart } from "./providers/registry.js";
export { findByokProvider, requireByokProvider } from "./providers/byok-providers.js";
export { usableCredential } from "./providers/byok-credentials.js";
export { isObject } from "./providers/json-shape.js";
export { readLines } from "./providers/line-reader.js";

import { isFreeEndpoint, type Catalog, type CatalogEndpoint, type DataRegion } from "../catalog/catalog.js";
import { findCatalogModel } from "../catalog/model-lookup.js";
import type { ApplyingGuardrail } from "./applying-guardrails.js";

/**
 * Which endpoints a key may use: the one place where guardrails (models, providers, data
 * regions, zero data retention, training) and the regional hostname of a request are turned
 * into a yes or no per endpoint. GET /models/user filters with it and the request router refuses
 * with it (403 naming the rule), so the list never shows what a request would be refused.
 *
 * Every guardrail that reaches the key applies on its own: an endpoint must satisfy all of them.
 */
export type PolicyRule =
  | "allowed_models"
  | "ignored_models"
  | "allowed_providers"
  | "ignored_providers"
  | "allowed_data_regions"
  | "enforce_zdr"
  | "enforce_zdr_openai"
  | "enforce_zdr_anthropic"
  | "enforce_zdr_google"
  | "enforce_zdr_xai"
  | "enforce_zdr_other"
  | "enable_free_model_training"
  | "enable_paid_model_training"
  | "regional_host";

type ZdrGroup = "openai" | "anthropic" | "google" | "xai" | "other";

export interface GuardrailPolicy {
  id: string;
  name: string;
  /** Catalog model ids (canonical slugs in the guardrail are resolved); null = no list. */
  allowedModels: ReadonlySet<string> | null;
  ignoredModels: ReadonlySet<string> | null;
  allowedProviders: ReadonlySet<string> | null;
  ignoredProviders: ReadonlySet<string> | null;
  allowedRegions: ReadonlySet<string> | null;
  /** `enforce_zdr`, and the per-author flags that override it when set. */
  zdr: { all: boolean | null } & Record<ZdrGroup, boolean | null>;
  freeModelTraining: boolean;
  paidModelTraining: boolean;
}

export interface RegionalHostname {
  hostname: string;
  region: DataRegion;
}

export interface EndpointPolicy {
  guardrails: readonly GuardrailPolicy[];
  /** The regional hostname the request arrived on; its endpoints must be in that region. */
  regionalHostname: RegionalHostname | null;
}

export type PolicyVerdict =
  | { allowed: true }
  | {
      allowed: false;
      rule: PolicyRule;
      /** The guardrail that refused; null for the regional hostname rule. */
      guardrailId: string | null;
      /** A sentence for the 403 message; names the rule, the guardrail and the endpoint's property. */
      reason: string;
    };

const ALLOWED: PolicyVerdict = { allowed: true };

export const UNRESTRICTED: EndpointPolicy = { guardrails: [], regionalHostname: null };

export function policyOf(
  guardrails: readonly ApplyingGuardrail[],
  catalog: Catalog,
  regionalHostname: RegionalHostname | null = null,
): EndpointPolicy {
  const models = (list: string[] | null) =>
    list === null
      ? null
      : new Set(list.map((ref) => findCatalogModel(catalog, ref.toLowerCase())?.id ?? ref.toLowerCase()));
  const names = (list: string[] | null) => (list === null ? null : new Set(list.map((name) => name.toLowerCase())));
  return {
    guardrails: guardrails.map((g) => ({
      id: g.id,
      name: g.name,
      allowedModels: models(g.allowedModels),
      ignoredModels: models(g.ignoredModels),
      allowedProviders: names(g.allowedProviders),
      ignoredProviders: names(g.ignoredProviders),
      allowedRegions: names(g.allowedDataRegions),
      zdr: zdrFlagsOf(g),
      freeModelTraining: g.enableFreeModelTraining,
      paidModelTraining: g.enablePaidModelTraining,
    })),
    regionalHostname,
  };
}

/**
 * The regional hostname a request arrived on, from the Host the facade forwards as
 * `x-forwarded-host` (port and case ignored); null for any other host.
 */
export function regionalHostnameOf(catalog: Catalog, hostHeader: string | null | undefined): RegionalHostname | null {
  if (!hostHeader || catalog.regionalHostnames.size === 0) return null;
  const hostname = hostHeader.trim().toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");
  const region = catalog.regionalHostnames.get(hostname);
  return region ? { hostname, region } : null;
}

export function endpointAllowed(policy: EndpointPolicy, endpoint: CatalogEndpoint): PolicyVerdict {
  const { regionalHostname } = policy;
  if (regionalHostname && endpoint.region !== regionalHostname.region) {
    return refuse(
      "regional_host",
      null,
      `requests to ${regionalHostname.hostname} stay in the ${regionalHostname.region} region, ` +
        `and endpoint ${endpoint.id} is in ${endpoint.region}`,
    );
  }
  for (const guardrail of policy.guardrails) {
    const verdict = guardrailVerdict(guardrail, endpoint);
    if (!verdict.allowed) return verdict;
  }
  return ALLOWED;
}

/** The endpoints the policy allows, in their order. */
export function allowedEndpoints(policy: EndpointPolicy, endpoints: readonly CatalogEndpoint[]): CatalogEndpoint[] {
  return endpoints.filter((endpoint) => endpointAllowed(policy, endpoint).allowed);
}

function guardrailVerdict(g: GuardrailPolicy, endpoint: CatalogEndpoint): PolicyVerdict {
  const by = `guardrail '${g.name}'`;
  const model = endpoint.modelId;
  const provider = endpoint.providerSlug.toLowerCase();
  if (g.allowedModels && !g.allowedModels.has(model))
    return refuse("allowed_models", g.id, `model ${model} is not in the allowed_models of ${by}`);
  if (g.ignoredModels?.has(model))
    return refuse("ignored_models", g.id, `model ${model} is in the ignored_models of ${by}`);
  if (g.allowedProviders && !g.allowedProviders.has(provider)) {
    return refuse("allowed_providers", g.id, `provider ${provider} is not in the allowed_providers of ${by}`);
  }
  if (g.ignoredProviders?.has(provider))
    return refuse("ignored_providers", g.id, `provider ${provider} is in the ignored_providers of ${by}`);
  // "global" in the list accepts any region: such a guardrail does not restrict where data goes.
  if (g.allowedRegions && !g.allowedRegions.has("global") && !g.allowedRegions.has(endpoint.region)) {
    return refuse(
      "allowed_data_regions",
      g.id,
      `endpoint ${endpoint.id} processes data in region ${endpoint.region}, ` +
        `which is not in the allowed_data_regions of ${by}`,
    );
  }
  const zdrRule = zdrRuleFor(g.zdr, model);
  if (zdrRule !== null && !endpoint.zdr) {
    return refuse(
      zdrRule,
      g.id,
      `${by} requires zero data retention (${zdrRule}) and endpoint ${endpoint.id} does not offer it`,
    );
  }
  if (endpoint.dataCollection === "allow") {
    const free = isFreeEndpoint(endpoint);
    if (free ? !g.freeModelTraining : !g.paidModelTraining) {
      const rule: PolicyRule = free ? "enable_free_model_training" : "enable_paid_model_training";
      return refuse(
        rule,
        g.id,
        `${by} does not allow ${free ? "free" : "paid"} endpoints that may retain or train on prompts (${rule}), ` +
          `and endpoint ${endpoint.id} may`,
      );
    }
  }
  return ALLOWED;
}

/**
 * Whether a guardrail among these demands zero data retention for calls to `modelId`. The response
 * cache keeps nothing for such calls (server/engine/response-cache/README.md).
 */
export function demandsZdr(guardrails: readonly ApplyingGuardrail[], modelId: string): boolean {
  return guardrails.some((g) => zdrRuleFor(zdrFlagsOf(g), modelId) !== null);
}

/**
 * The ZDR rule that governs calls to `modelId` (the per-author flag when set, else `enforce_zdr`);
 * null when none demands it.
 */
function zdrRuleFor(zdr: GuardrailPolicy["zdr"], modelId: string): PolicyRule | null {
  const group = zdrGroupOf(modelId);
  const groupFlag = zdr[group];
  if ((groupFlag ?? zdr.all) !== true) return null;
  return groupFlag === null ? "enforce_zdr" : `enforce_zdr_${group}`;
}

function zdrFlagsOf(g: ApplyingGuardrail): GuardrailPolicy["zdr"] {
  return {
    all: g.enforceZdr,
    openai: g.enforceZdrOpenai,
    anthropic: g.enforceZdrAnthropic,
    google: g.enforceZdrGoogle,
    xai: g.enforceZdrXai,
    other: g.enforceZdrOther,
  };
}

/** The per-author ZDR flag that governs a model: by the author part of its id. */
function zdrGroupOf(modelId: string): ZdrGroup {
  const author = modelId.slice(0, modelId.indexOf("/"));
  switch (author) {
    case "openai":
    case "anthropic":
    case "google":
      return author;
    case "x-ai":
    case "xai":
      return "xai";
    default:
      return "other";
  }
}

function refuse(rule: PolicyRule, guardrailId: string | null, reason: string): PolicyVerdict {
  return { allowed: false, rule, guardrailId, reason };
}

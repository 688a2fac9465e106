import { DataCollection, ProviderRoutingSort, type ProviderPreferences } from "../../../gen/gateway/v1/inference_pb.js";
import type { Catalog, CatalogEndpoint, CatalogModel } from "../catalog/catalog.js";
import { findCatalogModel } from "../catalog/model-lookup.js";
import { noModelsConfigured } from "../catalog/empty-catalog.js";
import { gatewayError } from "../../../wire/errors.js";

/**
 * Which endpoints may serve a call, and in which order to try them. Every rule that removes an
 * endpoint is applied here, before anything is reserved or sent: the endpoint policy of guardrails
 * and regional hostname (403 naming the rule, see governance/endpoint-policy.ts), then the
 * request's provider preferences (404 when nothing is left).
 * Order: the request's `provider.order`, then the rest by `provider.sort`, the workspace's default
 * sort, or by default price with endpoints that failed recently moved last.
 */
export type InferenceApi = "chat" | "embeddings";

export interface Attempt {
  model: CatalogModel;
  endpoint: CatalogEndpoint;
}

/** Recent behaviour of an endpoint as ranking sees it; null without recent calls. */
export interface EndpointRanking {
  latencyP50: number | null;
  throughputP50: number | null;
  uptime5m: number | null;
}

export interface RouteInput {
  catalog: Catalog;
  /** The requested model first, then the `models` fallbacks. */
  modelIds: string[];
  api: InferenceApi;
  preferences: ProviderPreferences | undefined;
  /** The workspace's `default_provider_sort`. */
  defaultSort: string | null;
  /** Request parameters in use, for `provider.require_parameters`. */
  parameters: string[];
  /** The caller organization's active private endpoints of a model. */
  privateEndpoints(modelId: string): Promise<CatalogEndpoint[]>;
  /** Why policy forbids an endpoint, or undefined when it allows it. */
  refusal(endpoint: CatalogEndpoint): string | undefined;
  ranking(endpointIds: string[]): Map<string, EndpointRanking>;
}

const MODALITY: Record<InferenceApi, string> = { chat: "text", embeddings: "embeddings" };

/** The ordered attempts of a call; throws the error of the primary model when none is possible. */
export async function planRoute(input: RouteInput): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let firstError: Error | undefined;
  for (const modelId of unique(input.modelIds)) {
    try {
      attempts.push(...(await attemptsFor(input, modelId)));
    } catch (err) {
      firstError ??= err as Error;
    }
  }
  if (attempts.length === 0) throw firstError ?? gatewayError(400, "No model given: set `model`");
  return attempts;
}

async function attemptsFor(input: RouteInput, requested: string): Promise<Attempt[]> {
  const { modelId, sortOverride } = modelVariant(requested);
  const model = findCatalogModel(input.catalog, modelId);
  if (!model)
    throw gatewayError(
      400,
      input.catalog.models.size === 0 ? noModelsConfigured(requested) : `${requested} is not a valid model ID`,
    );
  if (!model.outputModalities.includes(MODALITY[input.api])) {
    throw gatewayError(
      400,
      `${modelId} does not produce ${MODALITY[input.api]}; use a model whose output_modalities include it`,
    );
  }
  const all = [...model.endpoints, ...(await input.privateEndpoints(model.id))];

  if (all.length === 0) throw gatewayError(404, `No endpoint serves ${modelId}`);
  const permitted = all.filter((endpoint) => input.refusal(endpoint) === undefined);
  if (permitted.length === 0) throw gatewayError(403, `Not allowed: ${input.refusal(all[0]!)}`);

  const preferences = input.preferences;
  const candidates = permitted.filter((endpoint) => preferred(endpoint, preferences, input.parameters));
  if (candidates.length === 0)
    throw gatewayError(404, `No endpoints found for ${modelId} that satisfy the provider preferences`);

  const ordered = order(
    candidates,
    preferences,
    sortOverride ?? sortOf(preferences, input.defaultSort),
    input.ranking(candidates.map((e) => e.id)),
  );
  // Without fallbacks only the first choice is tried (and, with `order`, only the listed providers).
  const allowFallbacks = preferences?.allowFallbacks ?? true;
  const tried = allowFallbacks ? ordered : ordered.slice(0, 1);
  return tried.map((endpoint) => ({ model, endpoint }));
}

/** OpenRouter's shortcuts: `:nitro` sorts by throughput, `:floor` by price. */
function modelVariant(requested: string): { modelId: string; sortOverride?: Sort } {
  if (requested.endsWith(":nitro")) return { modelId: requested.slice(0, -6), sortOverride: "throughput" };
  if (requested.endsWith(":floor")) return { modelId: requested.slice(0, -6), sortOverride: "price" };
  return { modelId: requested };
}

function preferred(
  endpoint: CatalogEndpoint,
  preferences: ProviderPreferences | undefined,
  parameters: string[],
): boolean {
  if (!preferences) return true;
  const provider = endpoint.providerSlug;
  if (preferences.only.length > 0 && !preferences.only.includes(provider)) return false;
  if (preferences.ignore.includes(provider)) return false;
  if (preferences.allowFallbacks === false && preferences.order.length > 0 && !preferences.order.includes(provider))
    return false;
  if (preferences.dataCollection === DataCollection.DENY && endpoint.dataCollection === "allow") return false;
  if (preferences.zdr === true && !endpoint.zdr) return false;
  if (preferences.requireParameters === true && !parameters.every((p) => endpoint.supportedParameters.includes(p)))
    return false;
  return true;
}

type Sort = "price" | "throughput" | "latency" | "default";

function sortOf(preferences: ProviderPreferences | undefined, workspaceDefault: string | null): Sort {
  switch (preferences?.sort) {
    case ProviderRoutingSort.PRICE:
      return "price";
    case ProviderRoutingSort.THROUGHPUT:
      return "throughput";
    case ProviderRoutingSort.LATENCY:
      return "latency";
  }
  if (workspaceDefault === "price" || workspaceDefault === "throughput" || workspaceDefault === "latency")
    return workspaceDefault;
  // `exacto` (quality first) and no preference: the default ranking.
  return "default";
}

function order(
  candidates: CatalogEndpoint[],
  preferences: ProviderPreferences | undefined,
  sort: Sort,
  ranking: Map<string, EndpointRanking>,
): CatalogEndpoint[] {
  const explicit = preferences?.order ?? [];
  const rankOf = (e: CatalogEndpoint) => {
    const i = explicit.indexOf(e.providerSlug);
    return i === -1 ? explicit.length : i;
  };
  const price = (e: CatalogEndpoint) => Number(e.pricing.prompt) + Number(e.pricing.completion);
  const stat = (e: CatalogEndpoint) => ranking.get(e.id);
  const compare: Record<Sort, (a: CatalogEndpoint, b: CatalogEndpoint) => number> = {
    price: (a, b) => price(a) - price(b),
    // Endpoints without measurements rank after measured ones.
    throughput: (a, b) => (stat(b)?.throughputP50 ?? -1) - (stat(a)?.throughputP50 ?? -1),
    latency: (a, b) => (stat(a)?.latencyP50 ?? Infinity) - (stat(b)?.latencyP50 ?? Infinity) || 0,
    default: (a, b) => Number(unhealthy(stat(a))) - Number(unhealthy(stat(b))) || price(a) - price(b),
  };
  // Array.prototype.sort is stable: equal endpoints keep the config file's order.
  return [...candidates].sort((a, b) => rankOf(a) - rankOf(b) || compare[sort](a, b));
}

/** Fewer than half of the last five minutes' calls succeeded. */
function unhealthy(ranking: EndpointRanking | undefined): boolean {
  return ranking?.uptime5m !== null && ranking?.uptime5m !== undefined && ranking.uptime5m < 50;
}

function unique(ids: string[]): string[] {
  return [...new Set(ids.filter((id) => id !== ""))];
}

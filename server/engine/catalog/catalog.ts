import type { JsonObject } from "@bufbuild/protobuf";
import type { PoolKey } from "../key-pools/pool-key.js";
import type { ProviderKind, ProviderSettings } from "../providers/provider.js";
import type { CatalogVideoModel } from "./video-models.js";

/**
 * The model catalog in memory: what GATEWAY_CONFIG declares, as synchronized into Postgres at
 * start (see catalog-sync.ts). The hot path reads only this; the tables serve joins with the
 * ledger and other instances. Private endpoints of an organization are endpoints too; they are
 * per organization and come from private-endpoint-catalog.ts.
 */
export type DataRegion = "global" | "europe" | "us";

export interface CatalogProvider {
  slug: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  /** One key, or a pool of several (server/engine/key-pools); never stored in Postgres, never logged. */
  keys: PoolKey[];
  /** What the kind needs beyond a URL and a key (Azure's API version, AWS or Google credentials). */
  settings?: ProviderSettings;
  /** Time allowed until response headers arrive. */
  timeoutMs: number;
  /** Batches routed to this provider go through its own batch API instead of item by item. */
  nativeBatches: boolean;
}

/**
 * USD per token (prompt, completion), per image, per request, as exact decimal strings. The cache
 * prices are absent when the endpoint has none: its cached prompt tokens then cost `prompt`.
 */
export interface Pricing {
  prompt: string;
  completion: string;
  image: string;
  request: string;
  /** Per prompt token read from the provider's prompt cache. */
  inputCacheRead?: string;
  /** Per prompt token written to the provider's prompt cache. */
  inputCacheWrite?: string;
}

export interface CatalogEndpoint {
  /**
   * `<model id>@<provider slug>` plus `/<tag>` when the provider serves the model more than once;
   * private endpoints: their uuid.
   */
  id: string;
  modelId: string;
  providerSlug: string;
  providerName: string;
  tag: string;
  upstreamModelId: string;
  contextLength: number;
  maxCompletionTokens: number | null;
  maxPromptTokens: number | null;
  quantization: string | null;
  pricing: Pricing;
  supportedParameters: string[];
  supportsImplicitCaching: boolean;
  region: DataRegion;
  /** Zero data retention. */
  zdr: boolean;
  /** `allow` when the provider may retain or train on prompts. */
  dataCollection: "allow" | "deny";
  /** Set on an organization's private endpoint. */
  privateEndpointId?: string;
}

export interface CatalogModel {
  /** `author/slug`. */
  id: string;
  canonicalSlug: string;
  name: string;
  description: string;
  /** Unix seconds. */
  created: number;
  contextLength: number;
  inputModalities: string[];
  outputModalities: string[];
  tokenizer: string;
  instructType: string | null;
  supportedVoices: string[] | null;
  defaultParameters: JsonObject | null;
  perRequestLimits: JsonObject | null;
  /** YYYY-MM-DD. */
  expirationDate: string | null;
  knowledgeCutoff: string | null;
  isModerated: boolean;
  /** In the order of the config file. */
  endpoints: CatalogEndpoint[];
}

export interface Catalog {
  providers: ReadonlyMap<string, CatalogProvider>;
  /** In the order of the config file. */
  models: ReadonlyMap<string, CatalogModel>;
  /** Lower-case hostname (no port) → the region its requests must stay in. */
  regionalHostnames: ReadonlyMap<string, DataRegion>;
  /** The `video_models` section (video-models.ts), in the order of the config file. */
  videoModels: ReadonlyMap<string, CatalogVideoModel>;
}

/** A model is free when every price of every endpoint is zero. */
export function isFreeEndpoint(endpoint: CatalogEndpoint): boolean {
  const { prompt, completion, image, request, inputCacheRead = "0", inputCacheWrite = "0" } = endpoint.pricing;
  return [prompt, completion, image, request, inputCacheRead, inputCacheWrite].every((price) => Number(price) === 0);
}

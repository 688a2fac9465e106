/**
 * The catalog a parsed GATEWAY_CONFIG document declares (schema: see catalog-file.ts). Defaults
 * are filled in here, so the rest of the gateway never sees an absent field.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { PROVIDER_KINDS } from "../providers/registry.js";
import type { Catalog, CatalogEndpoint, CatalogModel, CatalogProvider, DataRegion, Pricing } from "./catalog.js";
import { child, ConfigReader, item } from "./config-reader.js";
import { CONFIG_PRICE } from "./decimal-price.js";
import { defaultSupportedParameters } from "./default-parameters.js";
import {
  DATA_COLLECTION,
  MODEL_ID_RULE,
  readCreated,
  readEndpointBase,
  REGIONS,
  type ProviderDefaults,
} from "./endpoint-entries.js";
import { readVideoModels } from "./video-models.js";
import { readKeys, readProviderSettings, substituteEnv } from "./provider-credentials.js";

type Env = Record<string, string | undefined>;

const INPUT_MODALITIES = ["text", "image", "file", "audio", "video"] as const;
/** The values GET /models accepts in `output_modalities`. */
const OUTPUT_MODALITIES = [
  "text",
  "image",
  "embeddings",
  "audio",
  "video",
  "rerank",
  "decisions",
  "speech",
  "transcription",
] as const;

const PROVIDER_SLUG = {
  pattern: /^[a-z0-9]+(-[a-z0-9]+)*$/,
  description: "a slug of lowercase letters, digits and single dashes",
};
const DATE = { pattern: /^\d{4}-\d{2}-\d{2}$/, description: "a date YYYY-MM-DD" };
const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const PRICE_RULE = 'must be a non-negative decimal string of USD with at most 12 decimal places, e.g. "0.0000025"';
const MAX_TOKENS = 100_000_000;

const ROOT_FIELDS = ["providers", "models", "regional_hosts", "video_models"] as const;
const PROVIDER_FIELDS = [
  "slug",
  "name",
  "kind",
  "base_url",
  "api_key",
  "api_keys",
  "api_version",
  "responses_api",
  "aws",
  "google_service_account",
  "timeout_ms",
  "native_batches",
  "region",
  "zdr",
  "data_collection",
] as const;
const MODEL_FIELDS = [
  "id",
  "canonical_slug",
  "name",
  "description",
  "created",
  "context_length",
  "input_modalities",
  "output_modalities",
  "tokenizer",
  "instruct_type",
  "supported_voices",
  "default_parameters",
  "per_request_limits",
  "expiration_date",
  "knowledge_cutoff",
  "is_moderated",
  "endpoints",
] as const;
const ENDPOINT_FIELDS = [
  "provider",
  "upstream_model_id",
  "pricing",
  "tag",
  "context_length",
  "max_completion_tokens",
  "max_prompt_tokens",
  "quantization",
  "supported_parameters",
  "supports_implicit_caching",
  "region",
  "zdr",
  "data_collection",
] as const;
const PRICING_FIELDS = ["prompt", "completion", "image", "request", "input_cache_read", "input_cache_write"] as const;

export function catalogFromDocument(document: unknown, source: string, env: Env): Catalog {
  const reader = new ConfigReader(source);
  if (document === null || document === undefined)
    return { providers: new Map(), models: new Map(), regionalHostnames: new Map(), videoModels: new Map() };
  const root = reader.object(document, "", ROOT_FIELDS);
  const defaults = new Map<string, ProviderDefaults>();
  const providers = readProviders(reader, root.providers, env, defaults);
  const models = readModels(reader, root.models, providers, defaults);
  const regionalHostnames = readRegionalHostnames(reader, root.regional_hosts);
  const videoModels = readVideoModels(reader, root.video_models, providers, defaults, models);
  return { providers, models, regionalHostnames, videoModels };
}

function readProviders(
  reader: ConfigReader,
  value: unknown,
  env: Env,
  defaults: Map<string, ProviderDefaults>,
): Map<string, CatalogProvider> {
  const providers = new Map<string, CatalogProvider>();
  reader.list(value, "providers", { optional: true }).forEach((entry, index) => {
    const path = item("providers", index);
    const p = reader.object(entry, path, PROVIDER_FIELDS);
    const slug = reader.string(p.slug, child(path, "slug"), PROVIDER_SLUG);
    if (providers.has(slug)) reader.fail(child(path, "slug"), `'${slug}' is declared twice`);
    const baseUrlPath = child(path, "base_url");
    const kind = reader.oneOf(p.kind, child(path, "kind"), PROVIDER_KINDS);
    const settings = readProviderSettings(reader, p, path, kind, env);
    providers.set(slug, {
      slug,
      name: reader.optionalString(p.name, child(path, "name")) ?? slug,
      kind,
      baseUrl: readBaseUrl(
        reader,
        substituteEnv(reader, reader.string(p.base_url, baseUrlPath), baseUrlPath, env),
        baseUrlPath,
      ),
      keys: readKeys(reader, p, path, env, settings),
      ...(settings ? { settings } : {}),
      timeoutMs: reader.optionalInteger(p.timeout_ms, child(path, "timeout_ms"), 1, 3_600_000) ?? 60_000,
      nativeBatches: reader.boolean(p.native_batches, child(path, "native_batches"), false),
    });
    defaults.set(slug, {
      region: reader.oneOf(p.region, child(path, "region"), REGIONS, "global"),
      zdr: reader.boolean(p.zdr, child(path, "zdr"), false),
      dataCollection: reader.oneOf(p.data_collection, child(path, "data_collection"), DATA_COLLECTION, "deny"),
    });
  });
  return providers;
}

/** An http(s) URL without credentials, query or fragment; kept without a trailing slash, as adapters append paths. */
function readBaseUrl(reader: ConfigReader, text: string, path: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return reader.fail(path, "must be an http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") reader.fail(path, "must be an http:// or https:// URL");
  if (url.username || url.password) reader.fail(path, "must not contain user credentials; use api_key");
  if (url.search || url.hash) reader.fail(path, "must not have a query or fragment");
  return url.toString().replace(/\/+$/, "");
}

function readModels(
  reader: ConfigReader,
  value: unknown,
  providers: Map<string, CatalogProvider>,
  defaults: Map<string, ProviderDefaults>,
): Map<string, CatalogModel> {
  const models = new Map<string, CatalogModel>();
  const declaredAt = new Map<string, string>();
  const endpointIds = new Map<string, string>();
  reader.list(value, "models", { optional: true }).forEach((entry, index) => {
    const path = item("models", index);
    const m = reader.object(entry, path, MODEL_FIELDS);
    const id = reader.string(m.id, child(path, "id"), MODEL_ID_RULE);
    const canonicalSlug = reader.optionalString(m.canonical_slug, child(path, "canonical_slug"), MODEL_ID_RULE) ?? id;
    // Ids and canonical slugs share one namespace: either finds the model (private endpoints, requests).
    const claim = (name: string, fieldPath: string) => {
      const earlier = declaredAt.get(name);
      if (earlier !== undefined) reader.fail(fieldPath, `'${name}' is already used by ${earlier}`);
      declaredAt.set(name, fieldPath);
    };
    claim(id, child(path, "id"));
    if (canonicalSlug !== id) claim(canonicalSlug, child(path, "canonical_slug"));

    const outputModalities = readModalities(
      reader,
      m.output_modalities,
      child(path, "output_modalities"),
      OUTPUT_MODALITIES,
    );
    const contextLength = reader.integer(m.context_length, child(path, "context_length"), 1, MAX_TOKENS);
    const model: CatalogModel = {
      id,
      canonicalSlug,
      name: reader.string(m.name, child(path, "name")),
      description:
        m.description === undefined || m.description === null
          ? ""
          : readText(reader, m.description, child(path, "description")),
      created: readCreated(reader, m.created, child(path, "created")),
      contextLength,
      inputModalities: readModalities(reader, m.input_modalities, child(path, "input_modalities"), INPUT_MODALITIES),
      outputModalities,
      tokenizer: reader.optionalString(m.tokenizer, child(path, "tokenizer")) ?? "Other",
      instructType: reader.optionalString(m.instruct_type, child(path, "instruct_type")),
      supportedVoices:
        m.supported_voices === undefined || m.supported_voices === null
          ? null
          : reader.stringList(m.supported_voices, child(path, "supported_voices")),
      defaultParameters: reader.optionalJsonObject(
        m.default_parameters,
        child(path, "default_parameters"),
      ) as JsonObject | null,
      perRequestLimits: reader.optionalJsonObject(
        m.per_request_limits,
        child(path, "per_request_limits"),
      ) as JsonObject | null,
      expirationDate: readDate(reader, m.expiration_date, child(path, "expiration_date")),
      knowledgeCutoff: reader.optionalString(m.knowledge_cutoff, child(path, "knowledge_cutoff")),
      isModerated: reader.boolean(m.is_moderated, child(path, "is_moderated"), false),
      endpoints: [],
    };
    reader.list(m.endpoints, child(path, "endpoints"), { nonEmpty: true }).forEach((raw, endpointIndex) => {
      const endpointPath = item(child(path, "endpoints"), endpointIndex);
      const endpoint = readEndpoint(reader, raw, endpointPath, model, providers, defaults);
      const earlier = endpointIds.get(endpoint.id);
      if (earlier !== undefined)
        reader.fail(
          endpointPath,
          `duplicates endpoint '${endpoint.id}' of ${earlier}; give one of them a distinct tag`,
        );
      endpointIds.set(endpoint.id, endpointPath);
      model.endpoints.push(endpoint);
    });
    models.set(id, model);
  });
  return models;
}

function readEndpoint(
  reader: ConfigReader,
  raw: unknown,
  path: string,
  model: CatalogModel,
  providers: Map<string, CatalogProvider>,
  defaults: Map<string, ProviderDefaults>,
): CatalogEndpoint {
  const e = reader.object(raw, path, ENDPOINT_FIELDS);
  const { provider, base } = readEndpointBase(reader, e, path, model.id, providers, defaults);
  return {
    ...base,
    contextLength:
      reader.optionalInteger(e.context_length, child(path, "context_length"), 1, MAX_TOKENS) ?? model.contextLength,
    maxCompletionTokens: reader.optionalInteger(
      e.max_completion_tokens,
      child(path, "max_completion_tokens"),
      1,
      MAX_TOKENS,
    ),
    maxPromptTokens: reader.optionalInteger(e.max_prompt_tokens, child(path, "max_prompt_tokens"), 1, MAX_TOKENS),
    quantization: reader.optionalString(e.quantization, child(path, "quantization")),
    pricing: readPricing(reader, e.pricing, child(path, "pricing")),
    supportedParameters:
      e.supported_parameters === undefined || e.supported_parameters === null
        ? defaultSupportedParameters(provider.kind, model.outputModalities)
        : [...new Set(reader.stringList(e.supported_parameters, child(path, "supported_parameters")))],
    supportsImplicitCaching: reader.boolean(
      e.supports_implicit_caching,
      child(path, "supports_implicit_caching"),
      false,
    ),
  };
}

function readPricing(reader: ConfigReader, value: unknown, path: string): Pricing {
  if (value === undefined || value === null)
    reader.fail(path, "is required: {prompt, completion} in USD per token as decimal strings");
  const p = reader.object(value, path, PRICING_FIELDS);
  const optionalPrice = (field: (typeof PRICING_FIELDS)[number]): string | undefined => {
    const raw = p[field];
    if (raw === undefined || raw === null) return undefined;
    const fieldPath = child(path, field);
    // A number in the file has already lost precision (1e-7 is not 0.0000001 in binary).
    if (typeof raw === "number") reader.fail(fieldPath, `${PRICE_RULE}; write it as a quoted string`);
    if (typeof raw !== "string" || !CONFIG_PRICE.test(raw))
      reader.fail(fieldPath, `${PRICE_RULE}, got ${JSON.stringify(raw)}`);
    return raw;
  };
  const price = (field: (typeof PRICING_FIELDS)[number], required: boolean): string => {
    const value = optionalPrice(field);
    if (value === undefined && required)
      reader.fail(child(path, field), `is required: ${PRICE_RULE.replace(/^must be /, "")}`);
    return value ?? "0";
  };
  const pricing: Pricing = {
    prompt: price("prompt", true),
    completion: price("completion", true),
    image: price("image", false),
    request: price("request", false),
  };
  // Absent stays absent: the models list shows a cache price only where the endpoint has one.
  const inputCacheRead = optionalPrice("input_cache_read");
  const inputCacheWrite = optionalPrice("input_cache_write");
  if (inputCacheRead !== undefined) pricing.inputCacheRead = inputCacheRead;
  if (inputCacheWrite !== undefined) pricing.inputCacheWrite = inputCacheWrite;
  return pricing;
}

function readModalities(reader: ConfigReader, value: unknown, path: string, allowed: readonly string[]): string[] {
  if (value === undefined || value === null) return ["text"];
  const list = reader
    .list(value, path, { nonEmpty: true })
    .map((entry, index) => reader.oneOf(entry, item(path, index), allowed));
  return [...new Set(list)];
}

function readDate(reader: ConfigReader, value: unknown, path: string): string | null {
  const text = reader.optionalString(value, path, DATE);
  const ms = text === null ? 0 : Date.parse(`${text}T00:00:00Z`);
  if (text !== null && (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== text))
    reader.fail(path, `must be a real calendar date, got ${JSON.stringify(text)}`);
  return text;
}

function readText(reader: ConfigReader, value: unknown, path: string): string {
  if (typeof value !== "string") reader.fail(path, "must be a string");
  return value;
}

function readRegionalHostnames(reader: ConfigReader, value: unknown): Map<string, DataRegion> {
  const hosts = new Map<string, DataRegion>();
  if (value === undefined || value === null) return hosts;
  if (typeof value !== "object" || Array.isArray(value))
    reader.fail("regional_hosts", "must be an object mapping host names to regions");
  for (const [host, region] of Object.entries(value)) {
    const path = child("regional_hosts", host);
    const name = host.toLowerCase();
    if (!HOST.test(name))
      reader.fail(path, 'must be keyed by a host name without scheme or port, e.g. "eu.gateway.example"');
    if (hosts.has(name)) reader.fail(path, "names a host already listed (host names are case-insensitive)");
    hosts.set(name, reader.oneOf(region, path, REGIONS));
  }
  return hosts;
}

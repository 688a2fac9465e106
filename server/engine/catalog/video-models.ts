import type { CatalogEndpoint, CatalogModel, CatalogProvider } from "./catalog.js";
import { MODEL_ID_RULE, readCreated, readEndpointBase, type ProviderDefaults } from "./endpoint-entries.js";
import { child, type ConfigReader, item } from "./config-reader.js";
import { compareDecimals, CONFIG_PRICE } from "./decimal-price.js";
import { PROVIDER_KINDS, providerFor } from "../providers/registry.js";

/**
 * The `video_models` section of GATEWAY_CONFIG: models served by a provider's asynchronous video
 * API (POST /api/v1/videos), listed by GET /api/v1/videos/models (docs/api/videos.md). They are a section
 * of their own rather than entries of `models` because nothing of a text model applies to them
 * (context length, token prices, chat parameters) and they never appear in the text model lists.
 *
 *   video_models[]          id, canonical_slug, name, description as for `models`
 *     created               ISO date or Unix seconds (required)
 *     supported_durations   seconds, at least one
 *     default_duration      one of them (default: the first)
 *     supported_resolutions e.g. ["720p", "1080p"] (default []: the field is refused); the first is the default
 *     supported_aspect_ratios e.g. ["16:9", "9:16"] (default [])
 *     supported_sizes       e.g. ["1280x720"], or null (default): exact sizes are refused
 *     supported_frame_images first_frame, last_frame (default [])
 *     max_input_references  reference images a request may carry (default 0)
 *     generate_audio        whether the model can add an audio track (default false)
 *     seed                  true / false / null = unknown (default null); false refuses `seed`
 *     allowed_passthrough_parameters  names accepted in provider.options.<slug>.parameters (default [])
 *     pricing_skus          {sku: "USD"}: `per-video` (per job), `per-video-second`, and
 *                           `per-video-second-<resolution>` for a listed resolution (default {}: free)
 *     endpoints[]           at least one: provider (an `openai` kind provider: its /videos API),
 *                           upstream_model_id, tag, region, zdr, data_collection (as for `models`)
 */
export type FrameType = "first_frame" | "last_frame";

export interface CatalogVideoModel {
  id: string;
  canonicalSlug: string;
  name: string;
  description: string;
  /** Unix seconds. */
  created: number;
  generateAudio: boolean;
  seed: boolean | null;
  /** SKU name → USD decimal string, in the config file's order. */
  pricingSkus: ReadonlyMap<string, string>;
  supportedDurations: number[];
  defaultDuration: number;
  supportedResolutions: string[];
  supportedAspectRatios: string[];
  supportedSizes: string[] | null;
  supportedFrameImages: FrameType[];
  maxInputReferences: number;
  allowedPassthroughParameters: string[];
  /**
   * Shaped as catalog endpoints so that guardrails, regional hostnames and BYOK keys apply to them
   * exactly as to text endpoints; their token prices are zero and `pricing.request` holds the
   * highest SKU price, so an endpoint counts as free exactly when every SKU is free.
   */
  endpoints: CatalogEndpoint[];
}

const FIELDS = [
  "id",
  "canonical_slug",
  "name",
  "description",
  "created",
  "supported_durations",
  "default_duration",
  "supported_resolutions",
  "supported_aspect_ratios",
  "supported_sizes",
  "supported_frame_images",
  "max_input_references",
  "generate_audio",
  "seed",
  "allowed_passthrough_parameters",
  "pricing_skus",
  "endpoints",
] as const;
const ENDPOINT_FIELDS = ["provider", "upstream_model_id", "tag", "region", "zdr", "data_collection"] as const;
const FRAME_TYPES: readonly FrameType[] = ["first_frame", "last_frame"];
const RESOLUTION = { pattern: /^[0-9]+[pK]$/, description: "a resolution such as 720p, 1080p or 4K" };
const ASPECT_RATIO = { pattern: /^[1-9][0-9]*:[1-9][0-9]*$/, description: "an aspect ratio such as 16:9" };
const SIZE = { pattern: /^[1-9][0-9]*x[1-9][0-9]*$/, description: "a size WIDTHxHEIGHT such as 1280x720" };
const PARAMETER = {
  pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
  description: "a parameter name of letters, digits and underscores",
};
const MAX_DURATION_S = 3_600;

export const SKU_PER_VIDEO = "per-video";
export const SKU_PER_SECOND = "per-video-second";

export function readVideoModels(
  reader: ConfigReader,
  value: unknown,
  providers: ReadonlyMap<string, CatalogProvider>,
  defaults: ReadonlyMap<string, ProviderDefaults>,
  textModels: ReadonlyMap<string, CatalogModel>,
): Map<string, CatalogVideoModel> {
  const models = new Map<string, CatalogVideoModel>();
  const names = new Set<string>([...textModels.values()].flatMap((m) => [m.id, m.canonicalSlug]));
  reader.list(value, "video_models", { optional: true }).forEach((entry, index) => {
    const path = item("video_models", index);
    const m = reader.object(entry, path, FIELDS);
    const id = reader.string(m.id, child(path, "id"), MODEL_ID_RULE);
    const canonicalSlug = reader.optionalString(m.canonical_slug, child(path, "canonical_slug"), MODEL_ID_RULE) ?? id;
    // Ids and canonical slugs of text and video models share one namespace, as requests name either.
    const claims: Array<[string, string]> =
      canonicalSlug === id
        ? [[id, "id"]]
        : [
            [id, "id"],
            [canonicalSlug, "canonical_slug"],
          ];
    for (const [name, field] of claims) {
      if (names.has(name)) reader.fail(child(path, field), `'${name}' is already used by another model`);
      names.add(name);
    }
    const created = readCreated(reader, m.created, child(path, "created"));
    if (created === 0) reader.fail(child(path, "created"), "is required: an ISO 8601 date or Unix seconds");
    const durations = unique(
      reader
        .list(m.supported_durations, child(path, "supported_durations"), { nonEmpty: true })
        .map((d, i) => reader.integer(d, item(child(path, "supported_durations"), i), 1, MAX_DURATION_S)),
    );
    const defaultDuration =
      reader.optionalInteger(m.default_duration, child(path, "default_duration"), 1, MAX_DURATION_S) ?? durations[0]!;
    if (!durations.includes(defaultDuration))
      reader.fail(child(path, "default_duration"), `must be one of supported_durations (${durations.join(", ")})`);
    const resolutions = unique(
      optionalList(reader, m.supported_resolutions, child(path, "supported_resolutions"), RESOLUTION),
    );
    const pricingSkus = readSkus(reader, m.pricing_skus, child(path, "pricing_skus"), resolutions);
    const model: CatalogVideoModel = {
      id,
      canonicalSlug,
      name: reader.string(m.name, child(path, "name")),
      description:
        m.description === undefined || m.description === null
          ? ""
          : reader.string(m.description, child(path, "description")),
      created,
      generateAudio: reader.boolean(m.generate_audio, child(path, "generate_audio"), false),
      seed: m.seed === undefined || m.seed === null ? null : reader.boolean(m.seed, child(path, "seed"), false),
      pricingSkus,
      supportedDurations: durations,
      defaultDuration,
      supportedResolutions: resolutions,
      supportedAspectRatios: unique(
        optionalList(reader, m.supported_aspect_ratios, child(path, "supported_aspect_ratios"), ASPECT_RATIO),
      ),
      supportedSizes:
        m.supported_sizes === undefined || m.supported_sizes === null
          ? null
          : unique(reader.stringList(m.supported_sizes, child(path, "supported_sizes"), SIZE)),
      supportedFrameImages: unique(
        reader
          .list(m.supported_frame_images, child(path, "supported_frame_images"), { optional: true })
          .map((f, i) => reader.oneOf(f, item(child(path, "supported_frame_images"), i), FRAME_TYPES)),
      ),
      maxInputReferences:
        reader.optionalInteger(m.max_input_references, child(path, "max_input_references"), 0, 16) ?? 0,
      allowedPassthroughParameters: unique(
        optionalList(
          reader,
          m.allowed_passthrough_parameters,
          child(path, "allowed_passthrough_parameters"),
          PARAMETER,
        ),
      ),
      endpoints: [],
    };
    const highest = [...pricingSkus.values()].reduce((a, b) => (compareDecimals(a, b) >= 0 ? a : b), "0");
    reader.list(m.endpoints, child(path, "endpoints"), { nonEmpty: true }).forEach((raw, endpointIndex) => {
      const endpoint = readEndpoint(
        reader,
        raw,
        item(child(path, "endpoints"), endpointIndex),
        model,
        highest,
        providers,
        defaults,
      );
      if (model.endpoints.some((e) => e.id === endpoint.id))
        reader.fail(
          item(child(path, "endpoints"), endpointIndex),
          `duplicates endpoint '${endpoint.id}'; give one of them a distinct tag`,
        );
      model.endpoints.push(endpoint);
    });
    models.set(id, model);
  });
  return models;
}

/** A video model by id or canonical slug. */
export function findVideoModel(
  models: ReadonlyMap<string, CatalogVideoModel>,
  ref: string,
): CatalogVideoModel | undefined {
  return models.get(ref) ?? [...models.values()].find((model) => model.canonicalSlug === ref);
}

function readSkus(reader: ConfigReader, value: unknown, path: string, resolutions: string[]): Map<string, string> {
  const skus = new Map<string, string>();
  if (value === undefined || value === null) return skus;
  if (typeof value !== "object" || Array.isArray(value))
    reader.fail(path, "must be an object mapping SKU names to USD decimal strings");
  const known = [SKU_PER_VIDEO, SKU_PER_SECOND, ...resolutions.map((r) => `${SKU_PER_SECOND}-${r.toLowerCase()}`)];
  for (const [sku, price] of Object.entries(value)) {
    const skuPath = child(path, sku);
    if (!known.includes(sku)) reader.fail(skuPath, `is not a SKU the gateway bills by (known: ${known.join(", ")})`);
    // A number in the file has already lost precision, as for token prices.
    if (typeof price !== "string" || !CONFIG_PRICE.test(price))
      reader.fail(skuPath, 'must be a non-negative decimal string of USD with at most 12 decimal places, e.g. "0.10"');
    skus.set(sku, price);
  }
  return skus;
}

function readEndpoint(
  reader: ConfigReader,
  raw: unknown,
  path: string,
  model: CatalogVideoModel,
  highestPrice: string,
  providers: ReadonlyMap<string, CatalogProvider>,
  defaults: ReadonlyMap<string, ProviderDefaults>,
): CatalogEndpoint {
  const e = reader.object(raw, path, ENDPOINT_FIELDS);
  const { provider, base } = readEndpointBase(reader, e, path, model.id, providers, defaults);
  if (!providerFor(provider.kind).video)
    reader.fail(
      child(path, "provider"),
      `'${provider.slug}' is of kind ${provider.kind}, which has no video API; ` +
        "video endpoints need a provider of a kind that has one " +
        `(${PROVIDER_KINDS.filter((kind) => providerFor(kind).video).join(", ")})`,
    );
  return {
    ...base,
    contextLength: 0,
    maxCompletionTokens: null,
    maxPromptTokens: null,
    quantization: null,
    pricing: { prompt: "0", completion: "0", image: "0", request: highestPrice },
    supportedParameters: [],
    supportsImplicitCaching: false,
  };
}

function optionalList(
  reader: ConfigReader,
  value: unknown,
  path: string,
  rule: { pattern: RegExp; description: string },
): string[] {
  return value === undefined || value === null ? [] : reader.stringList(value, path, rule);
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

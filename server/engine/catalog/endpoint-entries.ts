import type { CatalogEndpoint, CatalogProvider, DataRegion } from "./catalog.js";
import { child, type ConfigReader } from "./config-reader.js";
import { MODEL_ID } from "./model-lookup.js";

/**
 * What text models (catalog-document.ts) and video models (video-models.ts) of GATEWAY_CONFIG
 * read alike: model ids, creation dates, and the part of an endpoint every kind declares.
 */
export const REGIONS: readonly DataRegion[] = ["global", "europe", "us"];
export const DATA_COLLECTION = ["allow", "deny"] as const;
export const MODEL_ID_RULE = {
  pattern: MODEL_ID,
  description: "'author/slug' in lowercase letters, digits, '.', '_', '-', ':'",
};
const TAG = { pattern: /^[a-z0-9][a-z0-9._/-]*$/, description: "lowercase letters, digits, '.', '_', '-', '/'" };

/** Defaults an endpoint inherits from its provider. */
export interface ProviderDefaults {
  region: DataRegion;
  zdr: boolean;
  dataCollection: "allow" | "deny";
}

/**
 * What every endpoint declares, text or video (video-models.ts): its provider, id, upstream model
 * and where data goes.
 */
export type EndpointBase = Pick<
  CatalogEndpoint,
  "id" | "modelId" | "providerSlug" | "providerName" | "tag" | "upstreamModelId" | "region" | "zdr" | "dataCollection"
>;

export function readEndpointBase(
  reader: ConfigReader,
  e: Record<string, unknown>,
  path: string,
  modelId: string,
  providers: ReadonlyMap<string, CatalogProvider>,
  defaults: ReadonlyMap<string, ProviderDefaults>,
): { provider: CatalogProvider; base: EndpointBase } {
  const slug = reader.string(e.provider, child(path, "provider"));
  const provider = providers.get(slug);
  const inherited = defaults.get(slug);
  if (!provider || !inherited) {
    const declared = [...providers.keys()];
    reader.fail(
      child(path, "provider"),
      `'${slug}' is not a declared provider (declared: ${declared.length === 0 ? "none" : declared.join(", ")})`,
    );
  }
  const tag = reader.optionalString(e.tag, child(path, "tag"), TAG) ?? provider.slug;
  const base: EndpointBase = {
    id: `${modelId}@${provider.slug}${tag === provider.slug ? "" : `/${tag}`}`,
    modelId,
    providerSlug: provider.slug,
    providerName: provider.name,
    tag,
    upstreamModelId: reader.string(e.upstream_model_id, child(path, "upstream_model_id")),
    region: reader.oneOf(e.region, child(path, "region"), REGIONS, inherited.region),
    zdr: reader.boolean(e.zdr, child(path, "zdr"), inherited.zdr),
    dataCollection: reader.oneOf(
      e.data_collection,
      child(path, "data_collection"),
      DATA_COLLECTION,
      inherited.dataCollection,
    ),
  };
  return { provider, base };
}

/** Unix seconds from an ISO date / date-time or a positive integer; 0 = not configured (see catalog-sync.ts). */
export function readCreated(reader: ConfigReader, value: unknown, path: string): number {
  if (value === undefined || value === null) return 0;
  const rule = 'must be an ISO 8601 date ("2024-05-13" or "2024-05-13T00:00:00Z") or Unix seconds';
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value <= 0 || value > 253_402_300_799) reader.fail(path, `${rule}, got ${value}`);
    return value;
  }
  if (
    typeof value !== "string" ||
    !/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
  ) {
    reader.fail(path, `${rule}, got ${JSON.stringify(value)}`);
  }
  // A date-time without an offset is read as UTC, not as the server's local time.
  const text =
    /T|\s/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/.test(value)
      ? `${value.replace(" ", "T")}Z`
      : value.replace(" ", "T");
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || ms <= 0) reader.fail(path, `${rule}, got ${JSON.stringify(value)}`);
  return Math.floor(ms / 1000);
}

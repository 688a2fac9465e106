import { findByokProvider } from "../providers/byok-providers.js";
import { PrivateEndpointRow } from "../../platform/db/governance-models.js";
import type { Catalog, CatalogEndpoint, DataRegion } from "./catalog.js";
import { defaultSupportedParameters } from "./default-parameters.js";
import { findCatalogModel } from "./model-lookup.js";

const REGIONS: readonly string[] = ["global", "europe", "us"] satisfies DataRegion[];

/**
 * An organization's active private endpoints as catalog endpoints, so listing, policy and routing
 * treat them like the configured ones. Their id is the private endpoint's uuid; the router finds
 * the base URL and the BYOK credential through `privateEndpointId`.
 *
 * `modelId` is a catalog model id or canonical slug; without it, every model's endpoints. The rows
 * are an organization's active ones (`activePrivateEndpoints`), which the governance cache keeps.
 */
export function privateEndpointsOf(
  catalog: Catalog,
  rows: readonly PrivateEndpointRow[],
  modelId?: string,
): CatalogEndpoint[] {
  let matching = rows;
  if (modelId !== undefined) {
    const model = findCatalogModel(catalog, modelId);
    const refs = model ? [model.id, model.canonicalSlug] : [modelId];
    matching = rows.filter((row) => refs.includes(row.modelSlug) || refs.includes(row.modelPermaslug));
  }
  return matching.map((row) => toCatalogEndpoint(catalog, row));
}

/** An organization's active private endpoints, oldest first. */
export function activePrivateEndpoints(organizationId: string): Promise<PrivateEndpointRow[]> {
  return PrivateEndpointRow.findAll({
    where: { organizationId, status: "active" },
    order: [
      ["createdAt", "ASC"],
      ["id", "ASC"],
    ],
  });
}

function toCatalogEndpoint(catalog: Catalog, row: PrivateEndpointRow): CatalogEndpoint {
  const model = findCatalogModel(catalog, row.modelSlug) ?? findCatalogModel(catalog, row.modelPermaslug);
  // Private endpoints are created only for BYOK providers; an unknown one (removed from the list) speaks OpenAI.
  const kind = findByokProvider(row.providerSlug)?.kind ?? "openai";
  const region =
    row.declaredRegion !== null && REGIONS.includes(row.declaredRegion) ? (row.declaredRegion as DataRegion) : "global";
  return {
    id: row.id,
    modelId: model?.id ?? row.modelSlug,
    providerSlug: row.providerSlug,
    providerName: row.providerName,
    tag: row.providerSlug,
    upstreamModelId: row.upstreamModelId,
    contextLength: model?.contextLength ?? 0,
    maxCompletionTokens: null,
    maxPromptTokens: null,
    quantization: null,
    pricing: {
      prompt: row.pricingPrompt ?? "0",
      completion: row.pricingCompletion ?? "0",
      image: "0",
      request: "0",
      ...(row.pricingInputCacheRead === null ? {} : { inputCacheRead: row.pricingInputCacheRead }),
      ...(row.pricingInputCacheWrite === null ? {} : { inputCacheWrite: row.pricingInputCacheWrite }),
    },
    supportedParameters: defaultSupportedParameters(kind, model?.outputModalities ?? ["text"]),
    supportsImplicitCaching: false,
    region,
    zdr: row.declaredZdr,
    // A private deployment is the organization's own: the gateway's provider does not collect its data.
    dataCollection: "deny",
    privateEndpointId: row.id,
  };
}

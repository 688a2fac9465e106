import { Op, type WhereOptions } from "sequelize";
import { findByokProvider } from "../byok/byok-providers.js";
import { PrivateEndpointRow } from "../db/governance-models.js";
import type { Catalog, CatalogEndpoint, DataRegion } from "./catalog.js";
import { defaultSupportedParameters } from "./default-parameters.js";
import { findCatalogModel } from "./model-lookup.js";

const REGIONS: readonly string[] = ["global", "europe", "us"] satisfies DataRegion[];

/**
 * An organization's active private endpoints as catalog endpoints, so listing, policy and routing
 * treat them like the configured ones. Their id is the private endpoint's uuid; the router finds
 * the base URL and the BYOK credential through `privateEndpointId`.
 *
 * `modelId` is a catalog model id or canonical slug; without it, every model's endpoints.
 */
export async function privateEndpointsFor(catalog: Catalog, organizationId: string, modelId?: string): Promise<CatalogEndpoint[]> {
  const where: WhereOptions<PrivateEndpointRow> = { organizationId, status: "active" };
  if (modelId !== undefined) {
    const model = findCatalogModel(catalog, modelId);
    const refs = model ? [model.id, model.canonicalSlug] : [modelId];
    Object.assign(where, { [Op.or]: [{ modelSlug: refs }, { modelPermaslug: refs }] });
  }
  const rows = await PrivateEndpointRow.findAll({ where, order: [["createdAt", "ASC"], ["id", "ASC"]] });
  return rows.map((row) => toCatalogEndpoint(catalog, row));
}

function toCatalogEndpoint(catalog: Catalog, row: PrivateEndpointRow): CatalogEndpoint {
  const model = findCatalogModel(catalog, row.modelSlug) ?? findCatalogModel(catalog, row.modelPermaslug);
  // Private endpoints are created only for BYOK providers; an unknown one (removed from the list) speaks OpenAI.
  const kind = findByokProvider(row.providerSlug)?.kind ?? "openai";
  const region = row.declaredRegion !== null && REGIONS.includes(row.declaredRegion) ? (row.declaredRegion as DataRegion) : "global";
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
    pricing: { prompt: row.pricingPrompt ?? "0", completion: row.pricingCompletion ?? "0", image: "0", request: "0" },
    supportedParameters: defaultSupportedParameters(kind, model?.outputModalities ?? ["text"]),
    supportsImplicitCaching: false,
    region,
    zdr: row.declaredZdr,
    // A private deployment is the organization's own: the gateway's provider does not collect its data.
    dataCollection: "deny",
    privateEndpointId: row.id,
  };
}

import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { ModelsService } from "../../../gen/gateway/v1/models_pb.js";
import {
  NO_STATS,
  UNRESTRICTED,
  endpointStats,
  findCatalogModel,
  guardrailsApplyingTo,
  policyOf,
  privateEndpointsOf,
  regionalHostnameOf,
} from "../../engine/index.js";
import { callerOf, optionalCallerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { toModelWithEndpoints } from "./endpoint-view.js";
import { listResponse, usableModels, type ListedModel } from "./model-listing.js";
import { toModel } from "./model-view.js";
import { toProvider } from "./provider-view.js";

/**
 * The model catalog and its providers, answered from the in-memory catalog plus, for a
 * caller, its guardrails and its organization's active private endpoints. On a regional hostname
 * every list keeps only what can be served within that region.
 */
export function modelsService({
  sequelize,
  engine: { catalog, governance, keyPools },
}: Deps): Partial<ServiceImpl<typeof ModelsService>> {
  const regionalHostname = (ctx: HandlerContext) =>
    regionalHostnameOf(catalog, ctx.requestHeader.get("x-forwarded-host"));

  /** What the caller's key may use: its guardrails, the regional hostname, private endpoints included. */
  async function modelsFor(caller: Caller, ctx: HandlerContext): Promise<ListedModel[]> {
    const [guardrails, privateEndpoints] = await Promise.all([
      guardrailsApplyingTo(sequelize, caller.key),
      governance.privateEndpoints(caller.organization.id).then((rows) => privateEndpointsOf(catalog, rows)),
    ]);
    return usableModels(catalog, policyOf(guardrails, catalog, regionalHostname(ctx)), privateEndpoints);
  }

  /** The public catalog, or the caller's own when its organization filters it. */
  async function catalogFor(ctx: HandlerContext): Promise<ListedModel[]> {
    const caller = optionalCallerOf(ctx);
    return caller?.organization.isFilteredModelCatalogEnabled
      ? await modelsFor(caller, ctx)
      : usableModels(catalog, { ...UNRESTRICTED, regionalHostname: regionalHostname(ctx) });
  }

  return {
    async listModels(req, ctx) {
      return listResponse(await catalogFor(ctx), req, "/api/v1/models");
    },

    async listEmbeddingModels(req, ctx) {
      return listResponse(await catalogFor(ctx), req, "/api/v1/embeddings/models", "embeddings");
    },

    // Whatever its output modality: a model GET /models lists for this caller (with `output_modalities=all`).
    async getModel(req, ctx) {
      const id = req.id || (req.author && req.slug ? `${req.author}/${req.slug}` : "");
      if (!id)
        throw gatewayError(400, "Name the model: /models/{author}/{slug}, or its id with the slash encoded", {
          field: "id",
        });
      const model = findCatalogModel(catalog, id.toLowerCase());
      const listed = model && (await catalogFor(ctx)).find((entry) => entry.model === model);
      if (!listed) throw gatewayError(404, `Model '${id}' not found`);
      return toModel(listed.model, listed.endpoints);
    },

    async listUserModels(req, ctx) {
      return listResponse(await modelsFor(callerOf(ctx), ctx), req, "/api/v1/models/user");
    },

    async listModelEndpoints(req, ctx) {
      const id = `${req.author}/${req.slug}`;
      const model = findCatalogModel(catalog, id.toLowerCase());
      if (!model) throw gatewayError(404, `Model '${id}' not found`);
      const caller = optionalCallerOf(ctx);
      const endpoints = [
        ...model.endpoints,
        ...(caller
          ? privateEndpointsOf(catalog, await governance.privateEndpoints(caller.organization.id), model.id)
          : []),
      ];
      const stats = await endpointStats(
        sequelize,
        endpoints.map((endpoint) => endpoint.id),
      );
      const keys = keyPools.health();
      return {
        data: toModelWithEndpoints(
          model,
          endpoints.map((endpoint) => ({
            endpoint,
            stats: stats.get(endpoint.id) ?? NO_STATS,
            keys: endpoint.privateEndpointId ? undefined : keys.get(endpoint.providerSlug),
          })),
        ),
      };
    },

    listProviders(_req, ctx) {
      const keys = keyPools.health();
      const management = callerOf(ctx).key.isManagement;
      return {
        data: [...catalog.providers.values()].map((provider) =>
          toProvider(provider, keys.get(provider.slug), management),
        ),
      };
    },
  };
}

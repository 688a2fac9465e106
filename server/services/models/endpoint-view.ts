import { create } from "@bufbuild/protobuf";
import {
  ModelEndpointSchema,
  ModelWithEndpointsSchema,
  type ModelEndpoint,
  type ModelWithEndpoints,
} from "../../../gen/gateway/v1/models_pb.js";
import type { CatalogEndpoint, CatalogModel } from "../../engine/catalog/catalog.js";
import type { EndpointStats } from "../../engine/catalog/endpoint-stats.js";
import type { KeyHealth } from "../../engine/key-pools/key-pool.js";
import { architectureOf, pricingOf } from "./model-view.js";
import { poolStatus } from "./pool-status.js";

/** A model with the endpoints that serve it, each with its recent stats. */
export function toModelWithEndpoints(
  model: CatalogModel,
  endpoints: ReadonlyArray<{ endpoint: CatalogEndpoint; stats: EndpointStats; keys: KeyHealth[] | undefined }>,
): ModelWithEndpoints {
  return create(ModelWithEndpointsSchema, {
    id: model.id,
    name: model.name,
    created: BigInt(model.created),
    description: model.description,
    architecture: architectureOf(model),
    endpoints: endpoints.map(({ endpoint, stats, keys }) => toModelEndpoint(model, endpoint, stats, keys)),
  });
}

function toModelEndpoint(
  model: CatalogModel,
  endpoint: CatalogEndpoint,
  stats: EndpointStats,
  keys: KeyHealth[] | undefined,
): ModelEndpoint {
  return create(ModelEndpointSchema, {
    name: `${endpoint.providerName} | ${model.id}`,
    modelId: model.id,
    modelName: model.name,
    providerName: endpoint.providerName,
    tag: endpoint.tag,
    contextLength: endpoint.contextLength,
    maxCompletionTokens: endpoint.maxCompletionTokens ?? undefined,
    maxPromptTokens: endpoint.maxPromptTokens ?? undefined,
    quantization: endpoint.quantization ?? undefined,
    status: endpointStatus(stats, keys),
    pricing: pricingOf(endpoint.pricing),
    supportedParameters: endpoint.supportedParameters,
    supportsImplicitCaching: endpoint.supportsImplicitCaching,
    latencyLast30m: stats.latencyLast30m ?? undefined,
    throughputLast30m: stats.throughputLast30m ?? undefined,
    uptimeLast5m: stats.uptimeLast5m ?? undefined,
    uptimeLast30m: stats.uptimeLast30m ?? undefined,
    uptimeLast1d: stats.uptimeLast1d ?? undefined,
  });
}

/**
 * 0 when the endpoint is healthy or has no recent calls; -1 (degraded) when fewer than 90% of
 * its calls in the last 30 minutes succeeded upstream, or some keys of its provider's pool are
 * resting or refused; -2 (down) when fewer than half did in the last 5 minutes, or no key of the
 * pool can take a call now.
 */
export function endpointStatus(stats: EndpointStats, keys?: readonly KeyHealth[]): number {
  const pool = poolStatus(keys);
  if ((stats.uptimeLast5m !== null && stats.uptimeLast5m < 50) || pool === -2) return -2;
  if ((stats.uptimeLast30m !== null && stats.uptimeLast30m < 90) || pool === -1) return -1;
  return 0;
}

import { create } from "@bufbuild/protobuf";
import { ListModelsResponseSchema, type ListModelsResponse } from "../../../gen/gateway/v1/models_pb.js";
import type { Catalog, CatalogEndpoint, CatalogModel } from "../../engine/catalog/catalog.js";
import { pageOf } from "../../platform/rpc/pagination.js";
import { allowedEndpoints } from "../../engine/index.js";
import type { EndpointPolicy } from "../../engine/governance/endpoint-policy.js";
import { toModel } from "./model-view.js";

/**
 * The models a policy leaves usable, with the endpoints that survive it: a model stays when at
 * least one of its endpoints (configured or one of the organization's private ones) does.
 */
export interface ListedModel {
  model: CatalogModel;
  endpoints: CatalogEndpoint[];
}

export function usableModels(
  catalog: Catalog,
  policy: EndpointPolicy,
  privateEndpoints: readonly CatalogEndpoint[] = [],
): ListedModel[] {
  const privateByModel = new Map<string, CatalogEndpoint[]>();
  for (const endpoint of privateEndpoints)
    privateByModel.set(endpoint.modelId, [...(privateByModel.get(endpoint.modelId) ?? []), endpoint]);
  const listed: ListedModel[] = [];
  for (const model of catalog.models.values()) {
    const endpoints = allowedEndpoints(policy, [...model.endpoints, ...(privateByModel.get(model.id) ?? [])]);
    if (endpoints.length > 0) listed.push({ model, endpoints });
  }
  return listed;
}

export interface ListQuery {
  offset?: number;
  limit?: number;
  outputModalities?: string;
}

/**
 * `output_modalities` (default `text`, or the list's own; `all` lists everything), then one page:
 * the whole list when neither offset nor limit is given. `links.next` is the path of the following
 * page, or null.
 */
export function listResponse(
  listed: readonly ListedModel[],
  query: ListQuery,
  path: string,
  defaultModalities = "text",
): ListModelsResponse {
  const wanted = (query.outputModalities ?? defaultModalities).split(",");
  const matching = wanted.includes("all")
    ? listed
    : listed.filter(({ model }) => model.outputModalities.some((m) => wanted.includes(m)));
  const { offset, limit } = pageOf(query, matching.length);
  const data = matching.slice(offset, offset + limit).map(({ model, endpoints }) => toModel(model, endpoints));
  let next: string | undefined;
  if (query.limit !== undefined && offset + limit < matching.length) {
    const params = new URLSearchParams({ offset: String(offset + limit), limit: String(limit) });
    if (query.outputModalities !== undefined) params.set("output_modalities", query.outputModalities);
    next = `${path}?${params.toString()}`;
  }
  return create(ListModelsResponseSchema, { data, links: { next }, totalCount: matching.length });
}

import { create } from "@bufbuild/protobuf";
import {
  ModelArchitectureSchema,
  ModelPricingSchema,
  ModelSchema,
  type Model,
  type ModelArchitecture,
  type ModelPricing,
} from "../../../gen/gateway/v1/models_pb.js";
import type { CatalogEndpoint, CatalogModel, Pricing } from "../../engine/catalog/catalog.js";
import { comparePricing } from "../../engine/index.js";

/**
 * A catalog model as the models list shows it, summarized over the endpoints the
 * caller may use: pricing of the cheapest, limits of the first (the config's order is the
 * operator's preference), parameters any of them accepts.
 */
export function toModel(model: CatalogModel, endpoints: readonly CatalogEndpoint[] = model.endpoints): Model {
  const first = endpoints[0];
  const cheapest = [...endpoints].sort((a, b) => comparePricing(a.pricing, b.pricing))[0];
  return create(ModelSchema, {
    id: model.id,
    canonicalSlug: model.canonicalSlug,
    name: model.name,
    description: model.description,
    created: BigInt(model.created),
    contextLength: model.contextLength,
    architecture: architectureOf(model),
    pricing: pricingOf(cheapest?.pricing ?? { prompt: "0", completion: "0", image: "0", request: "0" }),
    topProvider: {
      contextLength: first?.contextLength ?? model.contextLength,
      maxCompletionTokens: first?.maxCompletionTokens ?? undefined,
      isModerated: model.isModerated,
    },
    supportedParameters: [...new Set(endpoints.flatMap((endpoint) => endpoint.supportedParameters))],
    supportedVoices: model.supportedVoices ?? [],
    defaultParameters: model.defaultParameters ?? undefined,
    perRequestLimits: model.perRequestLimits ?? undefined,
    expirationDate: model.expirationDate ?? undefined,
    knowledgeCutoff: model.knowledgeCutoff ?? undefined,
    links: { details: `/api/v1/models/${model.id}/endpoints` },
  });
}

export function architectureOf(model: CatalogModel): ModelArchitecture {
  return create(ModelArchitectureSchema, {
    inputModalities: model.inputModalities,
    outputModalities: model.outputModalities,
    modality: `${model.inputModalities.join("+")}->${model.outputModalities.join("+")}`,
    tokenizer: model.tokenizer,
    instructType: model.instructType ?? undefined,
  });
}

export function pricingOf(pricing: Pricing): ModelPricing {
  return create(ModelPricingSchema, { ...pricing });
}

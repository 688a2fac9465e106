import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DataRegionSchema } from "../../../gen/gateway/v1/common_pb.js";
import {
  PrivateEndpointSchema,
  PrivateEndpointStatusSchema,
  PrivateEndpointSummarySchema,
  type PrivateEndpoint,
  type PrivateEndpointSummary,
} from "../../../gen/gateway/v1/private_endpoints_pb.js";
import { optionalTimestamp } from "../../platform/rpc/timestamps.js";
import { enumFromStored } from "../../../wire/enums.js";
import type { PrivateEndpointRow } from "../../platform/db/governance-models.js";

/** Full record (plus created_at and validated_at). NUMERIC prices stay decimal strings. */
export function toPrivateEndpoint(row: PrivateEndpointRow): PrivateEndpoint {
  return create(PrivateEndpointSchema, {
    id: row.id,
    baseUrl: row.baseUrl ?? "",
    upstreamModelId: row.upstreamModelId,
    declaredRegion: enumFromStored(DataRegionSchema, row.declaredRegion),
    declaredZdr: row.declaredZdr,
    modelName: row.modelName,
    modelPermaslug: row.modelPermaslug,
    modelSlug: row.modelSlug,
    providerName: row.providerName,
    providerSlug: row.providerSlug,
    pricing:
      row.pricingPrompt !== null && row.pricingCompletion !== null
        ? {
            prompt: row.pricingPrompt,
            completion: row.pricingCompletion,
            inputCacheRead: row.pricingInputCacheRead ?? undefined,
            inputCacheWrite: row.pricingInputCacheWrite ?? undefined,
          }
        : undefined,
    status: enumFromStored(PrivateEndpointStatusSchema, row.status),
    createdAt: timestampFromDate(row.createdAt),
    validatedAt: optionalTimestamp(row.validatedAt),
  });
}

/** Summary record of the list. */
export function toPrivateEndpointSummary(row: PrivateEndpointRow): PrivateEndpointSummary {
  return create(PrivateEndpointSummarySchema, {
    id: row.id,
    createdAt: timestampFromDate(row.createdAt),
    modelName: row.modelName,
    modelPermaslug: row.modelPermaslug,
    modelSlug: row.modelSlug,
    providerName: row.providerName,
    status: enumFromStored(PrivateEndpointStatusSchema, row.status),
  });
}

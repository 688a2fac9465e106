/**
 * Ledger rows as OpenRouter's activity item and generation. What the ledger does not record
 * (the provider's answer id, finish reasons, media and search counts, app, referer, …) is left
 * unset, which the protos render as null.
 *
 * @module
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  GenerationApiTypeSchema,
  GenerationStatusSchema,
  type ActivityItemSchema,
  type GenerationSchema,
  type ProviderResponseSchema,
} from "../../../gen/gateway/v1/activity_pb.js";
import { DataRegionSchema } from "../../../gen/gateway/v1/common_pb.js";
import { usdNumber } from "../../engine/index.js";
import { enumFromStored } from "../../../wire/enums.js";
import type { ActivityRow, AttemptJson, GenerationRow } from "./activity-store.js";

type ActivityItemInit = MessageInitShape<typeof ActivityItemSchema>;
type GenerationInit = MessageInitShape<typeof GenerationSchema>;
type ProviderResponseInit = MessageInitShape<typeof ProviderResponseSchema>;

export function toActivityItem(row: ActivityRow): ActivityItemInit {
  return {
    date: row.date,
    model: row.model,
    modelPermaslug: row.model_permaslug,
    endpointId: row.endpoint_id ?? undefined,
    providerName: row.provider_name ?? undefined,
    usage: usdNumber(row.usage),
    byokUsageInference: usdNumber(row.byok_usage),
    requests: BigInt(row.requests),
    promptTokens: BigInt(row.prompt_tokens),
    completionTokens: BigInt(row.completion_tokens),
    reasoningTokens: BigInt(row.reasoning_tokens),
  };
}

/** The ledger's `api` column → OpenRouter's `api_type` names. */
const API_TYPES: Record<string, string> = { chat: "completions", embeddings: "embeddings", video: "video" };

export function toGeneration(row: GenerationRow): GenerationInit {
  const promptTokens = Number(row.prompt_tokens);
  const completionTokens = Number(row.completion_tokens);
  return {
    id: row.generation_id,
    totalCost: usdNumber(row.total_cost),
    upstreamInferenceCost: row.byok_cost === null ? undefined : usdNumber(row.byok_cost),
    createdAt: timestampFromDate(row.created_at),
    model: row.model_id,
    streamed: row.streamed,
    cancelled: row.status === "cancelled",
    providerName: row.provider_name ?? undefined,
    latency: row.latency_ms ?? undefined,
    generationTime: row.generation_ms ?? undefined,
    // The ledger keeps the provider's counts only, so both kinds of count are those.
    tokensPrompt: promptTokens,
    tokensCompletion: completionTokens,
    nativeTokensPrompt: promptTokens,
    nativeTokensCompletion: completionTokens,
    nativeTokensReasoning: Number(row.reasoning_tokens),
    nativeTokensCached: Number(row.cached_tokens),
    usage: usdNumber(row.paid_cost),
    isByok: row.is_byok,
    externalUser: row.end_user ?? undefined,
    apiType: enumFromStored(GenerationApiTypeSchema, API_TYPES[row.api]),
    providerResponses: row.attempts.map(toProviderResponse),
    dataRegion: enumFromStored(DataRegionSchema, row.data_region),
    status: enumFromStored(GenerationStatusSchema, row.status),
    httpStatus: row.http_status,
    apiKeyHash: row.key_hash,
    workspaceId: row.workspace_id,
    svcCacheHit: row.cache_hit,
    svcCacheSavings: usdNumber(row.cache_savings_usd),
  };
}

function toProviderResponse(attempt: AttemptJson): ProviderResponseInit {
  return {
    endpointId: attempt.endpoint_id ?? undefined,
    modelPermaslug: attempt.model_permaslug,
    providerName: attempt.provider_name ?? undefined,
    status: attempt.status,
    latency: attempt.latency ?? undefined,
    isByok: attempt.is_byok,
  };
}

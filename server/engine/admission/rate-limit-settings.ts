import { create } from "@bufbuild/protobuf";
import { SvcRateLimitSchema, type SvcRateLimit } from "../../../gen/gateway/v1/common_pb.js";

/**
 * A key's or a workspace's own limits per minute (docs/api/limits.md) as their rows keep them, and
 * as the API shows and takes them (`svc_rate_limit`). A write replaces both values, so the object
 * reads the same way it is written: a value left out is no such limit.
 */
export interface RateLimitColumns {
  rateLimitRequestsPerMinute: number | null;
  rateLimitTokensPerMinute: number | null;
}

/** The columns an API value sets; undefined (null in JSON) removes both limits. */
export function rateLimitColumns(value: SvcRateLimit | undefined): RateLimitColumns {
  return {
    rateLimitRequestsPerMinute: value?.requestsPerMinute ?? null,
    rateLimitTokensPerMinute: value?.tokensPerMinute ?? null,
  };
}

/** The API's value of a row's limits: null (undefined here) when it has neither. */
export function svcRateLimitOf(row: RateLimitColumns): SvcRateLimit | undefined {
  if (row.rateLimitRequestsPerMinute === null && row.rateLimitTokensPerMinute === null) return undefined;
  return create(SvcRateLimitSchema, {
    requestsPerMinute: row.rateLimitRequestsPerMinute ?? undefined,
    tokensPerMinute: row.rateLimitTokensPerMinute ?? undefined,
  });
}

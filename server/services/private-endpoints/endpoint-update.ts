import { DataRegionSchema } from "../../../gen/gateway/v1/common_pb.js";
import type { UpdatePrivateEndpointRequest } from "../../../gen/gateway/v1/private_endpoints_pb.js";
import { wireName } from "../../../wire/enums.js";

/** The part of an endpoint a PATCH replaces, as stored. */
export interface UpstreamConfig {
  upstreamModelId: string;
  baseUrl: string | null;
  declaredRegion: string | null;
  declaredZdr: boolean;
}

/**
 * The API's PATCH rules. `present` holds the body's keys (see changedFields). An omitted
 * base_url keeps the stored one. The declarations attest facts about one upstream, so an omitted
 * declaration is kept while the upstream (model id and base URL) is unchanged and cleared when it
 * changes; a given one applies either way (null clears). Whether anything changed decides, in the
 * caller, whether the earlier validation is cleared.
 */
export function patchUpstream(
  stored: UpstreamConfig,
  req: UpdatePrivateEndpointRequest,
  present: ReadonlySet<string>,
): { next: UpstreamConfig; changed: boolean } {
  const upstreamModelId = req.upstreamModelId;
  const baseUrl = present.has("base_url") && req.baseUrl !== undefined ? req.baseUrl : stored.baseUrl;
  const upstreamChanged = upstreamModelId !== stored.upstreamModelId || baseUrl !== stored.baseUrl;
  const declaredRegion = present.has("declared_region")
    ? (wireName(DataRegionSchema, req.declaredRegion) ?? null)
    : upstreamChanged
      ? null
      : stored.declaredRegion;
  const declaredZdr = present.has("declared_zdr")
    ? (req.declaredZdr ?? false)
    : upstreamChanged
      ? false
      : stored.declaredZdr;
  const next = { upstreamModelId, baseUrl, declaredRegion, declaredZdr };
  const changed = upstreamChanged || declaredRegion !== stored.declaredRegion || declaredZdr !== stored.declaredZdr;
  return { next, changed };
}

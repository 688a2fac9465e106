/**
 * The response cache's headers (docs/cache.md), which the REST facade passes to the core and back
 * like gRPC metadata: the client asks with `x-gateway-cache-ttl` (and may refresh an entry with
 * `Cache-Control: no-cache`); every cacheable answer says `x-gateway-cache: hit`, `miss` or `bypass`.
 *
 * @module
 */

export const CACHE_TTL_HEADER = "x-gateway-cache-ttl";
export const CACHE_CONTROL_HEADER = "cache-control";
export const CACHE_STATUS_HEADER = "x-gateway-cache";

export type CacheStatus = "hit" | "miss" | "bypass";

import { gatewayError } from "../../../wire/errors.js";
import { CACHE_CONTROL_HEADER, CACHE_TTL_HEADER } from "../../../wire/cache-headers.js";

/** What a request asks of the response cache (docs/cache.md). */
export interface CacheOrder {
  /** How long an answer stored for this request lives. */
  ttlS: number;
  /** `Cache-Control: no-cache`: skip the lookup, and store the fresh answer. */
  refresh: boolean;
}

/** The request's order, or undefined when it asks for nothing (no TTL: nothing is read or written). */
export function cacheOrderOf(headers: Headers, maxTtlS: number): CacheOrder | undefined {
  const raw = headers.get(CACHE_TTL_HEADER);
  if (raw === null) return undefined;
  const ttlS = /^\s*\d{1,10}\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(ttlS >= 1 && ttlS <= maxTtlS))
    throw gatewayError(400, `${CACHE_TTL_HEADER} must be a whole number of seconds from 1 to ${maxTtlS}`, {
      field: CACHE_TTL_HEADER,
    });
  const control = headers.get(CACHE_CONTROL_HEADER) ?? "";
  return { ttlS, refresh: /(^|,)\s*no-cache\s*(,|$)/i.test(control) };
}

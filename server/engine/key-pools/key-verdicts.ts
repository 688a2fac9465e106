import type { UpstreamError } from "../providers/provider.js";

/**
 * How many distinct calls must meet a 403 on one key, within FORBIDDEN_WINDOW_MS, before that key
 * counts as refused. A 403 is most often about the request (Gemini's PERMISSION_DENIED for a file
 * of another project, a model the account may not use), so one tenant's call must not take a key
 * out for everyone; a key whose credentials really lack permission fails every call, and three
 * calls in a minute find that out quickly. Counted per instance (a refusal is then shared).
 */
export const FORBIDDEN_CALLS_TO_REFUSE = 3;
export const FORBIDDEN_WINDOW_MS = 60_000;

/**
 * What a failed call says about the key it used, from the provider's own answer
 * (docs/providers.md has this table). A call says something about one key at most: once a
 * verdict of it rested, refused or counted against a key, its later failures say nothing more.
 *
 * - 429; 402 or an exhausted quota: `cooldown`. The key rests for Retry-After, else 1 s doubling
 *   per strike up to 5 min, never longer than GATEWAY_KEY_COOLDOWN_MAX_SECONDS; the call goes to
 *   another key at once, once.
 * - 401 (a refused token exchange is one): `refused`. The key is out, probed again after 2 min,
 *   doubling per failed probe up to 1 h; the call goes to another key at once, once.
 * - 403: `forbidden`. Counted; the 3rd distinct call with a 403 on the key within 60 s (on one
 *   instance) refuses it, as a 401. The call tries no other key, as without a pool (the 3rd: as a
 *   401).
 * - other 5xx, 408, timeout, broken connection: `unhealthy`. The key is unchanged; the call is
 *   retried once on another key.
 * - anything else (the request's own fault, a cut stream, the client gone): `none`. The key is
 *   unchanged; the call goes on as without a pool.
 */
export type KeyVerdict = "cooldown" | "refused" | "forbidden" | "unhealthy" | "none";

export function verdictOf(error: UpstreamError): KeyVerdict {
  switch (error.failure) {
    case "status": {
      const status = error.options.status ?? 502;
      if (status === 429 || status === 402) return "cooldown";
      if (status === 401) return "refused";
      if (status === 403) return "forbidden";
      return status >= 500 || status === 408 ? "unhealthy" : "none";
    }
    case "timeout":
    case "connect":
      return "unhealthy";
    default:
      return "none";
  }
}

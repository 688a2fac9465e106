import type { UpstreamError } from "../providers/provider.js";

/**
 * What a failed call says about the key it used, from the provider's own answer
 * (docs/providers.md has this table):
 *
 * | provider's answer                          | verdict   | the key                                  | the call                        |
 * |--------------------------------------------|-----------|------------------------------------------|---------------------------------|
 * | 429; 402 or an exhausted quota             | cooldown  | rests for Retry-After, else 1 s doubling per strike up to 5 min | goes to another key at once |
 * | 401, 403                                   | refused   | out until the configuration changes      | goes to another key at once     |
 * | other 5xx, 408, timeout, broken connection | unhealthy | unchanged                                | one retry on another key        |
 * | anything else (the request's own fault, a cut stream, the client gone) | none | unchanged | as without a pool        |
 */
export type KeyVerdict = "cooldown" | "refused" | "unhealthy" | "none";

export function verdictOf(error: UpstreamError): KeyVerdict {
  switch (error.failure) {
    case "status": {
      const status = error.options.status ?? 502;
      if (status === 429 || status === 402) return "cooldown";
      if (status === 401 || status === 403) return "refused";
      return status >= 500 || status === 408 ? "unhealthy" : "none";
    }
    case "timeout":
    case "connect":
      return "unhealthy";
    default:
      return "none";
  }
}

import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../core/errors.js";
import type { Quantity } from "./quantities.js";

/**
 * The spec's refusals of an inference call whose quantity has no room left: 429 with Retry-After
 * for the rate limit and the free-model quota, 402 naming the budget that is short.
 */
export interface Shortfall {
  quantity: Quantity;
  /** What is left for this call (requests, or USD), as the database computed it. */
  remaining: string;
  /** What the call needed (requests, or USD). */
  need: string;
  /** The binding limit's label. */
  label: string;
  retryAfterS: number | null;
}

export function refusalError({ quantity, remaining, need, label, retryAfterS }: Shortfall): ConnectError {
  const retryAfter = { "retry-after": String(Math.max(1, retryAfterS ?? 1)) };
  const limit = quantity.limits[0]?.limit ?? "0";
  switch (quantity.refusal) {
    case "rate_limit": {
      const windowS = Math.round(((quantity.windowEnd?.getTime() ?? 0) - quantity.windowStart.getTime()) / 1000);
      return gatewayError(429, `Rate limit exceeded: at most ${limit} requests per ${windowS} s for this key`, { retryable: true, headers: retryAfter });
    }
    case "free_quota":
      return gatewayError(429, `Free-model daily request limit of ${limit} reached for this key`, { retryable: true, headers: retryAfter });
    case "budget":
      return gatewayError(
        402,
        `Insufficient budget: ${label} has $${Number(remaining)} left and this request may cost up to $${Number(need)}; lower max_tokens or raise the limit`,
      );
  }
}

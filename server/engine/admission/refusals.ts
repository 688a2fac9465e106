import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../../../wire/errors.js";
import type { Quantity, Refusal } from "./quantities.js";

/**
 * The API's refusals of an inference call, for both ways of admitting one (leases and exact
 * reservations): 429 with Retry-After for the rate limit and the free-model quota, 402 naming the
 * budget that is short.
 */
export interface RefusalDetails {
  refusal: Refusal;
  /** Requests of the rate limit or the free-model quota. */
  limit: string;
  /** Length of the rate-limit window. */
  windowS: number;
  /** The binding budget's label. */
  label: string;
  /** What is left for this call (USD), as the database computed it. */
  remainingUsd: string;
  /** The call's worst case (USD). */
  estimateUsd: string;
  retryAfterS: number | null;
}

export function refusalError(d: RefusalDetails): ConnectError {
  const retryAfter = { "retry-after": String(Math.max(1, d.retryAfterS ?? 1)) };
  switch (d.refusal) {
    case "rate_limit":
      return gatewayError(429, `Rate limit exceeded: at most ${d.limit} requests per ${d.windowS} s for this key`, { retryable: true, headers: retryAfter });
    case "free_quota":
      return gatewayError(429, `Free-model daily request limit of ${d.limit} reached for this key`, { retryable: true, headers: retryAfter });
    case "budget":
      return gatewayError(402, `Insufficient budget: ${d.label} has $${Number(d.remainingUsd)} left and this request may cost up to $${Number(d.estimateUsd)}; lower max_tokens or raise the limit`);
  }
}

/** A lease grant found `quantity` short: what it had left and what the call needed, in its unit. */
export function shortfallError(quantity: Quantity, shortfall: { remaining: string; need: string; label: string; retryAfterS: number | null }): ConnectError {
  const windowS = Math.round(((quantity.windowEnd?.getTime() ?? 0) - quantity.windowStart.getTime()) / 1000);
  return refusalError({
    refusal: quantity.refusal,
    limit: quantity.limits[0]?.limit ?? "0",
    windowS,
    label: shortfall.label,
    remainingUsd: shortfall.remaining,
    estimateUsd: shortfall.need,
    retryAfterS: shortfall.retryAfterS,
  });
}

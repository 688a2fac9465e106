import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../../../wire/errors.js";
import { limitNameOf, type LimitName, type Quantity, type RateLimitName, type Refusal } from "./quantities.js";

/**
 * The API's refusals of an inference call, for both ways of admitting one (leases and exact
 * reservations): 429 with Retry-After for a rate limit and the free-model quota, naming the limit
 * (the key's or its workspace's, of requests or tokens, or the gateway's default), 402 naming the
 * budget that is short.
 */
export interface RefusalDetails {
  refusal: Refusal;
  /** Which rate limit refused (a lease's quantity); the gateway's default when not said. */
  rateLimit?: RateLimitName | null;
  /** Requests or tokens of the rate limit, or requests of the free-model quota. */
  limit: string;
  /** Length of the rate-limit window. */
  windowS: number;
  /** The binding budget's label. */
  label: string;
  /** What is left for this call, in the limit's unit (USD for a budget). */
  remainingUsd: string;
  /** The call's worst case, in the limit's unit (USD for a budget). */
  estimateUsd: string;
  retryAfterS: number | null;
}

/** The limit each 429 of admission was refused by: the ledger row and the metrics of the refusal name it. */
const refusedBy = new WeakMap<ConnectError, LimitName>();

/** Which limit refused a call, when `error` is admission's 429. */
export function refusedLimit(error: unknown): LimitName | undefined {
  return refusedBy.get(error as ConnectError);
}

const WHOSE: Record<"key" | "workspace", string> = { key: "this key's", workspace: "this key's workspace's" };

export function refusalError(d: RefusalDetails): ConnectError {
  const retryAfterS = Math.max(1, d.retryAfterS ?? 1);
  const retryAfter = { "retry-after": String(retryAfterS) };
  switch (d.refusal) {
    case "rate_limit": {
      const rateLimit = d.rateLimit ?? "gateway_requests";
      const error = gatewayError(429, rateLimitMessage(rateLimit, d, retryAfterS), {
        retryable: true,
        headers: retryAfter,
      });
      refusedBy.set(error, rateLimit);
      return error;
    }
    case "free_quota": {
      const error = gatewayError(429, `Free-model daily request limit of ${d.limit} reached for this key`, {
        retryable: true,
        headers: retryAfter,
      });
      refusedBy.set(error, "free_model_requests");
      return error;
    }
    case "budget":
      return gatewayError(
        402,
        `Insufficient budget: ${d.label} has $${Number(d.remainingUsd)} left and this ` +
          `request may cost up to $${Number(d.estimateUsd)}; lower max_tokens or raise the limit`,
      );
  }
}

function rateLimitMessage(rateLimit: RateLimitName, d: RefusalDetails, retryAfterS: number): string {
  if (rateLimit === "gateway_requests")
    return `Rate limit exceeded: at most ${d.limit} requests per ${d.windowS} s for this key`;
  const [owner, unit] = rateLimit.split("_") as ["key" | "workspace", "requests" | "tokens"];
  const limit = `${WHOSE[owner]} limit of ${svcLimit(unit, d.limit, d.windowS, d.label)}`;
  if (unit === "requests") return `Rate limit exceeded: ${limit} is reached; retry in ${retryAfterS} s`;
  return (
    `Rate limit exceeded: ${limit} has ${d.remainingUsd} left and this request may use up ` +
    `to ${d.estimateUsd} tokens (its prompt and the most it may generate); retry in ${retryAfterS} s`
  );
}

/**
 * A `svc_rate_limit` limit as a refusal names it: per minute, or per the shorter window it is
 * counted in (GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS), scaled; `perMinute` is its label.
 */
function svcLimit(unit: "requests" | "tokens", limit: string, windowS: number, perMinute: string): string {
  const field = `svc_rate_limit.${unit}_per_minute`;
  const amount = `${limit} ${limit === "1" ? unit.slice(0, -1) : unit}`;
  return windowS === 60
    ? `${amount} per minute (${field})`
    : `${amount} per ${windowS} s (${field}: ${perMinute}, counted per ${windowS} s)`;
}

/** A lease grant found `quantity` short: what it had left and what the call needed, in its unit. */
export function shortfallError(
  quantity: Quantity,
  shortfall: { remaining: string; need: string; label: string; retryAfterS: number | null },
): ConnectError {
  return refusalError({
    refusal: quantity.refusal,
    rateLimit: quantity.rateLimit,
    limit: quantity.limits[0]?.limit ?? "0",
    windowS: windowSecondsOf(quantity),
    label: shortfall.label,
    remainingUsd: shortfall.remaining,
    estimateUsd: shortfall.need,
    retryAfterS: shortfall.retryAfterS,
  });
}

/**
 * A call whose worst case alone passes a token limit can never be admitted under it: 429 as OpenAI
 * answers "Request too large", without Retry-After and with `x-should-retry: false` (which the
 * OpenAI SDKs obey), so neither a client nor a batch waits for a window that cannot help.
 */
export function tooLargeError(quantity: Quantity, need: number): ConnectError {
  const name = limitNameOf(quantity) ?? "key_tokens";
  const [owner] = name.split("_") as ["key" | "workspace"];
  const [limit] = quantity.limits;
  const error = gatewayError(
    429,
    `Request too large: it may use up to ${need} tokens (its prompt and the most it may generate), more than ` +
      `${WHOSE[owner]} limit of ` +
      `${svcLimit("tokens", limit?.limit ?? "0", windowSecondsOf(quantity), limit?.label ?? "")}; lower max_tokens`,
    { headers: { "x-should-retry": "false" } },
  );
  refusedBy.set(error, name);
  return error;
}

function windowSecondsOf(quantity: Quantity): number {
  return Math.round(((quantity.windowEnd?.getTime() ?? 0) - quantity.windowStart.getTime()) / 1000);
}

/** Whether `error` is a refusal no wait can turn into an admission (tooLargeError). */
export function isFinalRefusal(error: unknown): boolean {
  return refusedBy.has(error as ConnectError) && (error as ConnectError).metadata.get("x-should-retry") === "false";
}

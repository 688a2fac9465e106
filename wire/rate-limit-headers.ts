/**
 * OpenAI's rate-limit response headers (docs/api/limits.md), set by the core on every inference
 * answer and on its 429s, for the tightest request limit and the tightest token limit that apply
 * to the call. gRPC clients read them as response metadata; REST clients as headers.
 *
 * @module
 */

export const RATE_LIMIT_HEADERS = {
  limitRequests: "x-ratelimit-limit-requests",
  remainingRequests: "x-ratelimit-remaining-requests",
  resetRequests: "x-ratelimit-reset-requests",
  limitTokens: "x-ratelimit-limit-tokens",
  remainingTokens: "x-ratelimit-remaining-tokens",
  resetTokens: "x-ratelimit-reset-tokens",
} as const;

/** One limit that applies to a call: its unit, its size, what is left of it, and when its window ends. */
export interface RateLimitReading {
  kind: "requests" | "tokens";
  limit: number;
  remaining: number;
  resetMs: number;
}

/**
 * The headers of the tightest request limit and the tightest token limit among `readings` (the
 * least left; of equals, the smaller limit); a kind with no limit that applies has no headers.
 */
export function rateLimitHeaders(readings: readonly RateLimitReading[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const requests = tightest(readings, "requests");
  if (requests) {
    headers[RATE_LIMIT_HEADERS.limitRequests] = String(requests.limit);
    headers[RATE_LIMIT_HEADERS.remainingRequests] = String(Math.max(0, requests.remaining));
    headers[RATE_LIMIT_HEADERS.resetRequests] = openAiDuration(requests.resetMs);
  }
  const tokens = tightest(readings, "tokens");
  if (tokens) {
    headers[RATE_LIMIT_HEADERS.limitTokens] = String(tokens.limit);
    headers[RATE_LIMIT_HEADERS.remainingTokens] = String(Math.max(0, tokens.remaining));
    headers[RATE_LIMIT_HEADERS.resetTokens] = openAiDuration(tokens.resetMs);
  }
  return headers;
}

function tightest(readings: readonly RateLimitReading[], kind: RateLimitReading["kind"]): RateLimitReading | undefined {
  let best: RateLimitReading | undefined;
  for (const r of readings) {
    if (r.kind !== kind) continue;
    if (!best || r.remaining < best.remaining || (r.remaining === best.remaining && r.limit < best.limit)) best = r;
  }
  return best;
}

/**
 * A duration as OpenAI writes its reset headers, which is Go's `time.Duration` text to the
 * millisecond: `20ms`, `1s`, `1.5s`, `6m0s`, `1h2m3.5s` (`0s` for none).
 */
export function openAiDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return "0s";
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  // Go drops the fraction's trailing zeros: 1.5s, 1.25s, 1.005s.
  const fraction =
    millis % 1000 === 0
      ? ""
      : `.${String(millis % 1000)
          .padStart(3, "0")
          .replace(/0+$/, "")}`;
  const seconds = `${Math.floor(millis / 1000)}${fraction}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

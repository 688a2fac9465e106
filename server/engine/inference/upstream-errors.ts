import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../../../wire/errors.js";
import type { UpstreamError } from "../providers/provider.js";

/**
 * What the caller learns when a provider fails, and whether another endpoint may be tried.
 *
 * | upstream                                     | caller                             | fallback |
 * |----------------------------------------------|------------------------------------|----------|
 * | 400, 404, 422 (the request itself is bad)    | 400                                | no       |
 * | 413 (too large for the provider)             | 413                                | no       |
 * | 401, 402 (gateway's provider account)        | 502                                | yes      |
 * | 403 (most often the request's own, such as a | 502, with the provider's reason    | yes      |
 * | file another account owns)                   |                                    |          |
 * | 408, 429 (busy; Retry-After passed on)       | 429                                | yes      |
 * | 503                                          | 503                                | yes      |
 * | 529 (overloaded)                             | 529                                | yes      |
 * | other 5xx, broken connection, bad format     | 502                                | yes      |
 * | no response headers within the timeout       | 524                                | yes      |
 * | stream cut after it began                    | 502 `stream_severed` in the stream | no       |
 *
 * Messages name the provider and what happened; the provider's own error text is included (it
 * describes the caller's request) but never our credentials or headers.
 */
export function isRetryable(error: UpstreamError): boolean {
  switch (error.failure) {
    case "status": {
      const status = error.options.status ?? 502;
      return !(status === 400 || status === 404 || status === 413 || status === 422);
    }
    case "timeout":
    case "connect":
    case "protocol":
      return true;
    default:
      return false;
  }
}

export function toGatewayError(error: UpstreamError, provider: string): ConnectError {
  const detail = error.message ? `: ${error.message}` : "";
  switch (error.failure) {
    case "status":
      return statusError(error.options.status ?? 502, error.options.retryAfterS, provider, detail);
    case "timeout":
      return gatewayError(524, `Request timed out: ${provider} did not answer in time`, { retryable: true });
    case "connect":
      return gatewayError(502, `Provider ${provider} could not be reached${detail}`, { retryable: true });
    case "protocol":
      return gatewayError(502, `Provider ${provider} returned an invalid response${detail}`, { retryable: true });
    case "cut":
      return gatewayError(502, `Provider ${provider} ended the stream before it was complete`, {
        reason: "stream_severed",
        retryable: true,
      });
    case "unsupported":
      return gatewayError(400, `Provider ${provider} does not support this request${detail}`);
    case "aborted":
      return gatewayError(499, "Request cancelled by the client");
  }
}

function statusError(status: number, retryAfterS: number | undefined, provider: string, detail: string): ConnectError {
  const headers = retryAfterS === undefined ? undefined : { "retry-after": String(retryAfterS) };
  if (status === 400 || status === 404 || status === 422)
    return gatewayError(400, `Provider ${provider} rejected the request${detail}`);
  if (status === 413) return gatewayError(413, `Request too large for provider ${provider}${detail}`);
  if (status === 401 || status === 402) {
    return gatewayError(502, `Provider ${provider} refused the gateway's credentials (upstream status ${status})`, {
      retryable: true,
    });
  }
  // A key the provider no longer takes answers 401; a 403 most often names what this request may
  // not use (key-verdicts.ts), so the caller is told so with the provider's reason. It stays a 502:
  // a 403 from the gateway means one of its own refusals (guardrails, scopes), which metrics count.
  if (status === 403)
    return gatewayError(502, `Provider ${provider} refused this request as forbidden (upstream status 403)${detail}`, {
      retryable: true,
    });
  if (status === 408 || status === 429)
    return gatewayError(429, `Provider ${provider} is rate limiting requests${detail}`, { retryable: true, headers });
  if (status === 503)
    return gatewayError(503, `Provider ${provider} is temporarily unavailable${detail}`, { retryable: true, headers });
  if (status === 529)
    return gatewayError(529, `Provider ${provider} is overloaded${detail}`, { retryable: true, headers });
  return gatewayError(502, `Provider ${provider} returned an error (upstream status ${status})${detail}`, {
    retryable: true,
  });
}

import { isObject } from "./json-shape.js";

/**
 * What an upstream error body may tell the caller: the provider's own message (OpenAI and
 * Anthropic both put it at `error.message`), cut to MAX_MESSAGE_CHARS and scrubbed of anything
 * key-like, since providers echo (partly masked) keys in authentication errors.
 */
export const MAX_MESSAGE_CHARS = 300;

export function providerErrorMessage(body: unknown, apiKey: string): string | undefined {
  let text: string | undefined;
  if (isObject(body)) {
    const error = body.error;
    if (isObject(error) && typeof error.message === "string") text = error.message;
    else if (typeof error === "string") text = error;
    else if (typeof body.message === "string") text = body.message;
  }
  if (text === undefined) return undefined;
  const clean = redactSecrets(text, apiKey).trim();
  if (clean === "") return undefined;
  return clean.length > MAX_MESSAGE_CHARS ? `${clean.slice(0, MAX_MESSAGE_CHARS - 1)}…` : clean;
}

const KEY_LIKE = /\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{6,}|\bBearer\s+\S+/g;

export function redactSecrets(text: string, apiKey: string): string {
  const withoutKey = apiKey.length >= 4 ? text.split(apiKey).join("[redacted]") : text;
  return withoutKey.replace(KEY_LIKE, "[redacted]");
}

/**
 * The error type/code of an error a provider sent with a 2xx status (mostly in streams), as the
 * HTTP status it stands for.
 */
const STATUS_FOR_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  insufficient_quota: 429,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  timeout_error: 504,
  overloaded_error: 529,
  api_error: 502,
  server_error: 502,
};

/** Unknown or missing types are a failure of the upstream, hence 502. */
export function statusForErrorObject(error: Record<string, unknown>): number {
  const code = error.code;
  if (typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599) return code;
  for (const name of [error.type, code]) {
    if (typeof name === "string" && STATUS_FOR_ERROR_TYPE[name] !== undefined) return STATUS_FOR_ERROR_TYPE[name];
  }
  return 502;
}

/** `Retry-After` as seconds (delta-seconds or an HTTP date), else OpenAI's `retry-after-ms`. */
export function retryAfterSeconds(
  retryAfter: string | undefined,
  retryAfterMs: string | undefined,
  now = Date.now(),
): number | undefined {
  if (retryAfter !== undefined && retryAfter.trim() !== "") {
    const trimmed = retryAfter.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
    const date = Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  if (retryAfterMs !== undefined && /^\d+(\.\d+)?$/.test(retryAfterMs.trim()))
    return Math.ceil(Number(retryAfterMs.trim()) / 1000);
  return undefined;
}

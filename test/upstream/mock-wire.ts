import type http from "node:http";

/** HTTP details the mock's routes share (live calls in mock-upstream.ts, batches in mock-batches.ts). */

export type Provider = "openai" | "anthropic";
export type Json = Record<string, unknown>;

export const MOCK_UPSTREAM_API_KEY = "mock-upstream-key";

/**
 * The credentials the mock accepts: its key, and any key that extends it (`mock-upstream-key-b`),
 * so that a provider's pool can hold several working keys. Anything else is refused with 401.
 */
export function acceptedKey(key: string | undefined): boolean {
  return key !== undefined && (key === MOCK_UPSTREAM_API_KEY || key.startsWith(`${MOCK_UPSTREAM_API_KEY}-`));
}

/** Checks the key the way each provider sends it; answers 401 in the provider's format otherwise. */
export function authorized(provider: Provider, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const key =
    provider === "openai"
      ? /^Bearer (.*)$/.exec(req.headers.authorization ?? "")?.[1]
      : header(req.headers["x-api-key"]);
  if (acceptedKey(key)) return true;
  refuseKey(provider, res, key);
  return false;
}

/** The provider's 401: OpenAI's names part of the wrong key, which the gateway must not pass on. */
export function refuseKey(provider: Provider, res: http.ServerResponse, key: string | undefined): void {
  sendError(
    res,
    provider,
    401,
    provider === "openai" ? `Incorrect API key provided: ${maskKey(key ?? "")}.` : "invalid x-api-key",
  );
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

const ANTHROPIC_ERROR_TYPE: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const OPENAI_ERROR: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  404: { type: "invalid_request_error", code: "model_not_found" },
  429: { type: "requests", code: "rate_limit_exceeded" },
};

export function sendError(
  res: http.ServerResponse,
  provider: Provider,
  status: number,
  message: string,
  headers: http.OutgoingHttpHeaders = {},
): void {
  sendJson(res, status, errorBody(provider, status, message), headers);
}

/** The error body each provider sends with `status`; batch results embed the same bodies. */
export function errorBody(provider: Provider, status: number, message: string): Json {
  if (provider === "anthropic") {
    const type = ANTHROPIC_ERROR_TYPE[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message } };
  }
  const { type, code } = OPENAI_ERROR[status] ?? {
    type: status >= 500 ? "server_error" : "invalid_request_error",
    code: null,
  };
  return { error: { message, type, param: null, code } };
}

/** As OpenAI does it: enough of the wrong key to recognise it, which the gateway must not pass on. */
function maskKey(key: string): string {
  return key.length <= 8 ? key : `${key.slice(0, 6)}${"*".repeat(key.length - 10)}${key.slice(-4)}`;
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  return flat;
}

import type { ServerResponse } from "node:http";
import { ConnectError } from "@connectrpc/connect";
import { ErrorDialect } from "../gen/gateway/v1/options_pb.js";
import { errorTypeOf } from "../wire/error-dialects.js";
import { httpErrorOf, type HttpError } from "../wire/errors.js";

/**
 * The API's error envelope (docs/api/conventions.md): {"error": {"code", "message", "metadata"?:
 * {"reason", "retryable"}}}. On a route of another API's surface (`(gateway.v1.error_dialect)`)
 * `error` also carries that API's `type`, and OpenAI's `param` where the field at fault is known
 * (wire/error-dialects.ts).
 */
export function errorBody(error: HttpError, dialect: ErrorDialect = ErrorDialect.UNSPECIFIED): string {
  const metadata =
    error.reason === undefined ? {} : { metadata: { reason: error.reason, retryable: error.retryable ?? false } };
  const type = errorTypeOf(dialect, error.status);
  const typed =
    type === undefined
      ? {}
      : { type, ...(dialect === ErrorDialect.OPENAI && error.field ? { param: error.field } : {}) };
  return JSON.stringify({ error: { code: error.status, message: error.message, ...metadata, ...typed } });
}

export function toHttpError(err: unknown): HttpError {
  return httpErrorOf(ConnectError.from(err));
}

export function sendError(
  res: ServerResponse,
  error: HttpError,
  headers: Record<string, string> = {},
  dialect?: ErrorDialect,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(error, dialect);
  res.writeHead(error.status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

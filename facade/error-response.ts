import type { ServerResponse } from "node:http";
import { ConnectError } from "@connectrpc/connect";
import { httpErrorOf, type HttpError } from "../wire/errors.js";

/** The spec's error envelope: {"error": {"code", "message", "metadata"?: {"reason", "retryable"}}}. */
export function errorBody(error: HttpError): string {
  const metadata = error.reason === undefined ? {} : { metadata: { reason: error.reason, retryable: error.retryable ?? false } };
  return JSON.stringify({ error: { code: error.status, message: error.message, ...metadata } });
}

export function toHttpError(err: unknown): HttpError {
  return httpErrorOf(ConnectError.from(err));
}

export function sendError(res: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(error);
  res.writeHead(error.status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

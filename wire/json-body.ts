import type { JsonObject } from "@bufbuild/protobuf";
import { gatewayError, errorMessage } from "./errors.js";

/**
 * A JSON request body as its one parse: the REST facade parses the bodies of message-built routes
 * with it, and the core the raw bodies of the JSON-native inference routes, so a malformed body is
 * the same 400 on either. An empty body is `{}`.
 */
export function parseJsonBody(raw: Uint8Array): unknown {
  if (raw.length === 0) return {};
  try {
    return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8"));
  } catch (err) {
    throw gatewayError(400, `Malformed JSON body: ${errorMessage(err)}`);
  }
}

/** A body that must be a JSON object (every `body: "*"` route). */
export function parseJsonObjectBody(raw: Uint8Array): JsonObject {
  const body = parseJsonBody(raw);
  if (!isJsonObject(body)) throw gatewayError(400, "The request body must be a JSON object");
  return body;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

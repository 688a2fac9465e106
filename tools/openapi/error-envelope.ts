import { errorHeaders } from "./headers.js";
import type { JsonSchema, Response } from "./openapi-types.js";

/**
 * The API's error envelope as facade/error-response.ts writes it, a shared component that every
 * operation's 4XX and 5XX answers refer to. Not a proto message: the core's errors travel as a
 * ConnectError with a `gateway.v1.ErrorDetail`, and the facade renders this body from it.
 * Routes of another API's surface (wire/error-dialects.ts) add that API's `type` (and `param`).
 */
export const ERROR_SCHEMA_NAME = "Error";
export const ERROR_RESPONSE_NAME = "Error";

export const errorSchema: JsonSchema = {
  type: "object",
  description: "The error envelope of every failed request (and of an SSE stream that fails midway).",
  properties: {
    error: {
      type: "object",
      properties: {
        code: { type: "integer", description: "The HTTP status." },
        message: { type: "string", description: "What went wrong, for a human." },
        metadata: {
          type: "object",
          description: "Present where the error has a machine-readable reason.",
          properties: {
            reason: { type: "string", description: "A stable identifier of the error, e.g. `intern_not_running`." },
            retryable: { type: "boolean", description: "Whether the same request may succeed later." },
          },
          required: ["reason", "retryable"],
        },
        type: {
          type: "string",
          description:
            "On routes of OpenAI's or Anthropic's API surface (`(gateway.v1.error_dialect)`): " +
            "that API's error type, e.g. `invalid_request_error`.",
        },
        param: {
          type: "string",
          description: "On routes of OpenAI's API surface: the request field at fault, where known.",
        },
      },
      required: ["code", "message"],
    },
  },
  required: ["error"],
};

export const errorRef: JsonSchema = { $ref: `#/components/schemas/${ERROR_SCHEMA_NAME}` };

export const errorResponse: Response = {
  description: "An error, in the error envelope.",
  headers: errorHeaders(),
  content: { "application/json": { schema: errorRef } },
};

/** The 4XX and 5XX entries of an operation's responses. */
export function errorResponses(): Record<string, { $ref: string }> {
  const ref = { $ref: `#/components/responses/${ERROR_RESPONSE_NAME}` };
  return { "4XX": ref, "5XX": ref };
}

import type { JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { gatewayError } from "../../wire/errors.js";

/**
 * Request fields that several inference calls read the same way.
 */

/** Parameters an endpoint must support under `provider.require_parameters` (the catalog's `supported_parameters` names). */
const ROUTABLE_PARAMETERS = new Set([
  "temperature",
  "top_p",
  "top_k",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "reasoning",
  "dimensions",
  "input_type",
]);

/** Fields that steer the gateway, not the model: never sent upstream. */
const GATEWAY_FIELDS = new Set(["model", "models", "provider", "session_id", "user", "stream", "stream_options"]);

/** A chat or embeddings body as the provider gets it (the adapter sets the model and streaming). */
export function withoutGatewayFields(body: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(body).filter(([name]) => !GATEWAY_FIELDS.has(name)));
}

export function parametersIn(body: JsonObject): string[] {
  // `max_completion_tokens` is the newer name of `max_tokens`; catalogs list the latter.
  return [...new Set(Object.keys(body).filter((name) => ROUTABLE_PARAMETERS.has(name)).map((name) => (name === "max_completion_tokens" ? "max_tokens" : name)))];
}

const MAX_SESSION_ID = 256;

/** `session_id` of the body wins over the `x-session-id` header (spec 4.11); both at most 256 characters. */
export function sessionIdOf(fromBody: string | undefined, ctx: HandlerContext): string | undefined {
  if (fromBody !== undefined) return fromBody;
  const header = ctx.requestHeader.get("x-session-id") ?? undefined;
  if (header !== undefined && [...header].length > MAX_SESSION_ID) {
    throw gatewayError(400, `x-session-id must be at most ${MAX_SESSION_ID} characters`);
  }
  return header;
}

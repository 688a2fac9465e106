/**
 * Request fields that several inference calls read the same way.
 *
 * @module
 */
import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { gatewayError } from "../../../wire/errors.js";
import { findField } from "../../../wire/json-input.js";

/**
 * Parameters an endpoint must support under `provider.require_parameters` (the catalog's
 * `supported_parameters` names).
 */
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

/**
 * Fields that steer the gateway, not the model: never sent upstream. Every other field passes
 * through to the provider as the client sent it (docs/decisions.md, "Inference requests pass
 * through"). `stream` and `stream_options` are set by the provider adapter; `extra_body` has been
 * merged into the body by then (withExtraBody). The rest are OpenRouter's routing and accounting
 * fields, which an upstream would refuse.
 */
const GATEWAY_FIELDS = new Set([
  "model",
  "models",
  "provider",
  "session_id",
  "user",
  "stream",
  "stream_options",
  "extra_body",
  "transforms",
  "usage",
  "route",
  "plugins",
  "preset",
  "trace",
  "debug",
]);

/** A chat or embeddings body as the provider gets it (the adapter sets the model and streaming). */
export function withoutGatewayFields(body: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const name in body) {
    if (!GATEWAY_FIELDS.has(name)) out[name] = body[name]!;
  }
  return out;
}

/**
 * `extra_body` (the typed requests' way to send fields their message lacks) as top-level fields of
 * the body, where a REST client puts them. A field the request message has is refused: it has a
 * place of its own, and two values for it would be ambiguous.
 */
export function withExtraBody(body: JsonObject, schema: DescMessage): JsonObject {
  const extra = body.extra_body;
  if (extra === undefined) return body;
  const { extra_body: _extra, ...rest } = body;
  if (extra === null) return rest;
  if (typeof extra !== "object" || Array.isArray(extra))
    throw gatewayError(400, "extra_body must be an object", { field: "extra_body" });
  for (const name of Object.keys(extra)) {
    if (findField(schema, name))
      throw gatewayError(400, `extra_body.${name} is a field of the request: set it directly`, {
        field: `extra_body.${name}`,
      });
    rest[name] = extra[name]!;
  }
  return rest;
}

export function parametersIn(body: JsonObject): string[] {
  // `max_completion_tokens` is the newer name of `max_tokens`; catalogs list the latter.
  return [
    ...new Set(
      Object.keys(body)
        .filter((name) => ROUTABLE_PARAMETERS.has(name))
        .map((name) => (name === "max_completion_tokens" ? "max_tokens" : name)),
    ),
  ];
}

const MAX_SESSION_ID = 256;

/** `session_id` of the body wins over the `x-session-id` header; both at most 256 characters. */
export function sessionIdOf(fromBody: string | undefined, ctx: HandlerContext): string | undefined {
  if (fromBody !== undefined) return fromBody;
  const header = ctx.requestHeader.get("x-session-id") ?? undefined;
  if (header !== undefined && [...header].length > MAX_SESSION_ID) {
    throw gatewayError(400, `x-session-id must be at most ${MAX_SESSION_ID} characters`);
  }
  return header;
}

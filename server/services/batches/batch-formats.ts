import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { BatchEndpoint } from "../../../gen/gateway/v1/batches_pb.js";
import type { FormatIds } from "../../engine/inference/formats/format-fields.js";
import {
  chatToMessage,
  chatToResponse,
  messagesToChat,
  responsesToChat,
  withoutGatewayFields,
} from "../../engine/index.js";
import type { InferenceApi } from "../../engine/inference/routing.js";

/**
 * What each batch endpoint format means for the runner: which inference API runs it, how an item
 * body is checked at submission, how it becomes the pipeline's request (the OpenAI chat or
 * embeddings format the adapters take) and how the answer goes back into the endpoint's format.
 * Responses and Messages items go through the same translators as the live POST /responses and
 * POST /messages routes.
 */
export interface BatchFormat {
  api: InferenceApi;
  /** Why the body cannot be run, or undefined; `path` prefixes field names in the message. */
  problem(body: JsonObject, path: string): string | undefined;
  /** The pipeline's request: gateway-only fields dropped, never streamed. */
  toPipeline(body: JsonObject): JsonObject;
  /** The endpoint's answer from the pipeline's (`chat.completion` or embeddings list). */
  fromPipeline(answer: JsonObject, ids: FormatIds): JsonObject;
  /** Completion tokens the request may produce, for the worst-case cost. */
  maxOutputTokens(body: JsonObject): number | undefined;
  /** The parts of the body whose text counts as prompt. */
  promptParts(body: JsonObject): JsonValue[];
}

function arrayProblem(body: JsonObject, field: string, path: string): string | undefined {
  const value = body[field];
  if (!Array.isArray(value) || value.length === 0) return `${path}.${field} must be a non-empty array`;
  return undefined;
}

const chat: BatchFormat = {
  api: "chat",
  problem: (body, path) => arrayProblem(body, "messages", path),
  toPipeline: withoutGatewayFields,
  fromPipeline: (answer) => answer,
  maxOutputTokens: (body) => positive(body.max_completion_tokens) ?? positive(body.max_tokens),
  promptParts: (body) => [...asArray(body.messages), ...asArray(body.tools)],
};

const embeddings: BatchFormat = {
  api: "embeddings",
  problem(body, path) {
    const input = body.input;
    if (typeof input === "string" ? input === "" : !Array.isArray(input) || input.length === 0)
      return `${path}.input must be a non-empty string or array`;
    return undefined;
  },
  toPipeline: withoutGatewayFields,
  fromPipeline: (answer) => answer,
  maxOutputTokens: () => 0,
  promptParts: (body) => asArray(body.input),
};

/** A format that runs as chat: translated in, checked and estimated as the chat it becomes. */
function translatedChat(
  toChat: (body: JsonObject) => JsonObject,
  fromChat: (completion: JsonObject, ids: FormatIds) => JsonObject,
): BatchFormat {
  return {
    api: "chat",
    problem(body, path) {
      try {
        return chat.problem(toChat(body), path);
      } catch (err) {
        if (err instanceof ConnectError) return `${path}: ${err.rawMessage}`;
        throw err;
      }
    },
    toPipeline: (body) => withoutGatewayFields(toChat(body)),
    fromPipeline: fromChat,
    maxOutputTokens: (body) => chat.maxOutputTokens(toChat(body)),
    promptParts: (body) => chat.promptParts(toChat(body)),
  };
}

const FORMATS: Record<Exclude<BatchEndpoint, BatchEndpoint.UNSPECIFIED>, BatchFormat> = {
  [BatchEndpoint.CHAT_COMPLETIONS]: chat,
  [BatchEndpoint.RESPONSES]: translatedChat(responsesToChat, chatToResponse),
  [BatchEndpoint.MESSAGES]: translatedChat(messagesToChat, chatToMessage),
  [BatchEndpoint.EMBEDDINGS]: embeddings,
};

export function formatOf(endpoint: BatchEndpoint): BatchFormat | undefined {
  return endpoint === BatchEndpoint.UNSPECIFIED ? undefined : FORMATS[endpoint];
}

function asArray(value: JsonValue | undefined): JsonValue[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function positive(value: JsonValue | undefined): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

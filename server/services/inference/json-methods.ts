/**
 * The JSON methods of inference (`…FromJson`, what the REST door calls): the raw body, parsed
 * once, checked by the compiled validator, and handed to the pipeline as the client sent it; the
 * pipeline's JSON goes back as the answer body, or as ready SSE frames when streamed (the facade
 * adds keepalives and the error event of a stream that fails midway).
 *
 * @module
 */
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { HttpBodySchema, type HttpBody } from "../../../gen/google/api/httpbody_pb.js";
import { parseJsonObjectBody } from "../../../wire/json-body.js";
import { jsonEventFrames, SSE_CONTENT_TYPE, type SseCarrier } from "../../../wire/sse-frames.js";
import { ChatCompletionRequestSchema, CreateEmbeddingRequestSchema } from "../../../gen/gateway/v1/inference_pb.js";
import {
  MESSAGES_API,
  RESPONSES_API,
  chatCompletions,
  createEmbeddings,
  translatedChat,
  validateChatRequest,
  validateEmbeddingRequest,
  withExtraBody,
} from "../../engine/index.js";
import type { Engine } from "../../engine/engine.js";
import type { InferenceOutput } from "../../engine/inference/inference-output.js";

type HttpBodyOut = MessageInitShape<typeof HttpBodySchema>;

export async function* chatCompletionFromJson(
  engine: Engine,
  req: HttpBody,
  ctx: HandlerContext,
): AsyncGenerator<HttpBodyOut> {
  const body = parseJsonObjectBody(req.data);
  validateChatRequest(body);
  yield* rendered(chatCompletions(engine, withExtraBody(body, ChatCompletionRequestSchema), ctx), false);
}

export async function embeddingFromJson(engine: Engine, req: HttpBody, ctx: HandlerContext): Promise<HttpBodyOut> {
  const body = parseJsonObjectBody(req.data);
  validateEmbeddingRequest(body);
  return jsonBody(await createEmbeddings(engine, withExtraBody(body, CreateEmbeddingRequestSchema), ctx));
}

/** The Responses and Messages bodies are checked by their translation to chat (translated-chat.ts). */
export function responseFromJson(engine: Engine, req: HttpBody, ctx: HandlerContext): AsyncGenerator<HttpBodyOut> {
  return rendered(translatedChat(engine, parseJsonObjectBody(req.data), ctx, RESPONSES_API), true);
}

export function messageFromJson(engine: Engine, req: HttpBody, ctx: HandlerContext): AsyncGenerator<HttpBodyOut> {
  return rendered(translatedChat(engine, parseJsonObjectBody(req.data), ctx, MESSAGES_API), true);
}

/**
 * A reply as one JSON body; events as SSE frames (wire/sse-frames.ts), the first carrying the
 * content type, each named after its `type` with `namedEvents` (the Responses and Messages
 * streams, which end without `[DONE]`).
 */
function rendered(outputs: AsyncIterable<InferenceOutput>, namedEvents: boolean): AsyncGenerator<HttpBodyOut> {
  return jsonEventFrames(outputs, namedEvents, HTTP_BODY_FRAMES);
}

const HTTP_BODY_FRAMES: SseCarrier<InferenceOutput, HttpBodyOut> = {
  event: (out) => out.value,
  chunk: (frame, first) => ({ contentType: first ? SSE_CONTENT_TYPE : "", data: Buffer.from(frame) }),
  whole: (out) => (out.kind === "reply" ? jsonBody(out.value) : undefined),
};

function jsonBody(value: JsonObject): HttpBodyOut {
  return create(HttpBodySchema, { contentType: "application/json", data: Buffer.from(JSON.stringify(value)) });
}

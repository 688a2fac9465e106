/**
 * The typed methods of inference (what gRPC clients call): adapters into the same pipelines as the
 * JSON methods. The request message becomes its wire JSON (the validation interceptor has checked it),
 * with `extra_body` as top-level fields; the pipeline's JSON becomes the answer message, with the
 * top-level fields the message has no field for in `extra`.
 *
 * @module
 */
import {
  fromJson,
  type DescMessage,
  type JsonObject,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  ChatCompletionRequestSchema,
  CreateEmbeddingRequestSchema,
  CreateEmbeddingResponseSchema,
  type ChatCompletionRequest,
  type CreateEmbeddingRequest,
  type CreateEmbeddingResponse,
  type CreateMessageRequest,
  type CreateResponseRequest,
  type MessageStreamEventSchema,
  type ResponseStreamEventSchema,
} from "../../../gen/gateway/v1/inference_pb.js";
import {
  ChatCompletionChunkSchema,
  ChatCompletionSchema,
  type ChatCompletionEventSchema,
} from "../../../gen/gateway/v1/chat_answers_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { findField } from "../../../wire/json-input.js";
import { wireJson } from "../../../wire/json.js";
import {
  MESSAGES_API,
  RESPONSES_API,
  chatCompletions,
  createEmbeddings,
  translatedChat,
  withExtraBody,
} from "../../engine/index.js";
import type { Engine } from "../../engine/engine.js";

export async function* chatCompletionTyped(
  engine: Engine,
  req: ChatCompletionRequest,
  ctx: HandlerContext,
): AsyncGenerator<MessageInitShape<typeof ChatCompletionEventSchema>> {
  for await (const out of chatCompletions(engine, requestJson(ChatCompletionRequestSchema, req), ctx)) {
    yield out.kind === "reply"
      ? { event: { case: "completion", value: typedAnswer(ChatCompletionSchema, out.value) } }
      : { event: { case: "chunk", value: typedAnswer(ChatCompletionChunkSchema, out.value) } };
  }
}

export async function embeddingTyped(
  engine: Engine,
  req: CreateEmbeddingRequest,
  ctx: HandlerContext,
): Promise<CreateEmbeddingResponse> {
  return typedAnswer(
    CreateEmbeddingResponseSchema,
    await createEmbeddings(engine, requestJson(CreateEmbeddingRequestSchema, req), ctx),
  );
}

export async function* responseTyped(
  engine: Engine,
  req: CreateResponseRequest,
  ctx: HandlerContext,
): AsyncGenerator<MessageInitShape<typeof ResponseStreamEventSchema>> {
  for await (const out of translatedChat(engine, req.body ?? {}, ctx, RESPONSES_API)) {
    yield {
      event: out.kind === "reply" ? { case: "response", value: out.value } : { case: "streamEvent", value: out.value },
    };
  }
}

export async function* messageTyped(
  engine: Engine,
  req: CreateMessageRequest,
  ctx: HandlerContext,
): AsyncGenerator<MessageInitShape<typeof MessageStreamEventSchema>> {
  for await (const out of translatedChat(engine, req.body ?? {}, ctx, MESSAGES_API)) {
    yield {
      event: out.kind === "reply" ? { case: "message", value: out.value } : { case: "streamEvent", value: out.value },
    };
  }
}

/** A typed request as the body a REST client would have sent for it. */
function requestJson<Desc extends DescMessage>(schema: Desc, req: MessageShape<Desc>): JsonObject {
  return withExtraBody(wireJson(schema, req, { compact: true }) as JsonObject, schema);
}

/**
 * An answer message from the pipeline's JSON. Its top-level fields without a place in the message
 * go to `extra`; nested ones the message cannot hold are dropped, as a typed client could not read
 * them anyway. An answer the message cannot represent at all (a provider's field of another type)
 * is a 502: the call itself succeeded and is billed, but a typed method cannot carry its answer.
 */
function typedAnswer<Desc extends DescMessage>(schema: Desc, json: JsonObject): MessageShape<Desc> {
  const known: JsonObject = {};
  const extra: JsonObject = {};
  let hasExtra = false;
  for (const name in json) {
    if (name !== "extra" && findField(schema, name)) known[name] = json[name]!;
    else {
      extra[name] = json[name]!;
      hasExtra = true;
    }
  }
  if (hasExtra) known.extra = extra;
  try {
    return fromJson(schema, known, { ignoreUnknownFields: true });
  } catch (err) {
    throw gatewayError(
      502,
      `The provider's answer does not fit ${schema.name} ` +
        `(${err instanceof Error ? err.message.slice(0, 200) : "invalid"}); the REST API carries it as it is`,
    );
  }
}

import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../../gen/gateway/v1/inference_pb.js";
import type { Engine } from "../../engine/engine.js";
import { chatCompletionFromJson, embeddingFromJson, messageFromJson, responseFromJson } from "./json-methods.js";
import { chatCompletionTyped, embeddingTyped, messageTyped, responseTyped } from "./typed-methods.js";

/**
 * POST /chat/completions, /embeddings, /responses and /messages: each as a JSON method (the raw
 * body, for REST) and a typed method (the typed messages, for gRPC) into one pipeline (README.md
 * beside this file).
 */
export function inferenceService(engine: Engine): ServiceImpl<typeof InferenceService> {
  return {
    createChatCompletionFromJson: (req, ctx) => chatCompletionFromJson(engine, req, ctx),
    createEmbeddingFromJson: (req, ctx) => embeddingFromJson(engine, req, ctx),
    createResponseFromJson: (req, ctx) => responseFromJson(engine, req, ctx),
    createMessageFromJson: (req, ctx) => messageFromJson(engine, req, ctx),
    createChatCompletion: (req, ctx) => chatCompletionTyped(engine, req, ctx),
    createEmbedding: (req, ctx) => embeddingTyped(engine, req, ctx),
    createResponse: (req, ctx) => responseTyped(engine, req, ctx),
    createMessage: (req, ctx) => messageTyped(engine, req, ctx),
  };
}

import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../../gen/gateway/v1/inference_pb.js";
import type { InferenceRuntime } from "../../engine/inference/inference-runtime.js";
import { chatCompletionFromJson, embeddingFromJson, messageFromJson, responseFromJson } from "./json-doors.js";
import { chatCompletionTyped, embeddingTyped, messageTyped, responseTyped } from "./typed-doors.js";

/**
 * POST /chat/completions, /embeddings, /responses and /messages: each with a REST door (the raw
 * JSON body) and a gRPC door (the typed messages) into one pipeline (README.md beside this file).
 */
export function inferenceService(runtime: InferenceRuntime): ServiceImpl<typeof InferenceService> {
  return {
    createChatCompletionFromJson: (req, ctx) => chatCompletionFromJson(runtime, req, ctx),
    createEmbeddingFromJson: (req, ctx) => embeddingFromJson(runtime, req, ctx),
    createResponseFromJson: (req, ctx) => responseFromJson(runtime, req, ctx),
    createMessageFromJson: (req, ctx) => messageFromJson(runtime, req, ctx),
    createChatCompletion: (req, ctx) => chatCompletionTyped(runtime, req, ctx),
    createEmbedding: (req, ctx) => embeddingTyped(runtime, req, ctx),
    createResponse: (req, ctx) => responseTyped(runtime, req, ctx),
    createMessage: (req, ctx) => messageTyped(runtime, req, ctx),
  };
}

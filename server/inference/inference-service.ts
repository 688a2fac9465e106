import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../gen/gateway/v1/inference_pb.js";
import { chatCompletions } from "./chat-completions.js";
import { createEmbeddings } from "./embeddings.js";
import type { InferenceRuntime } from "./inference-call.js";
import { createMessage } from "./messages.js";
import { createResponse } from "./responses.js";

/** POST /chat/completions, POST /embeddings, and POST /responses and POST /messages (translated to chat). */
export function inferenceService(runtime: InferenceRuntime): ServiceImpl<typeof InferenceService> {
  return {
    createChatCompletion: (req, ctx) => chatCompletions(runtime, req, ctx),
    createEmbedding: (req, ctx) => createEmbeddings(runtime, req, ctx),
    createResponse: (req, ctx) => createResponse(runtime, req, ctx),
    createMessage: (req, ctx) => createMessage(runtime, req, ctx),
  };
}

import type { ServiceImpl } from "@connectrpc/connect";
import type { InferenceService } from "../../gen/gateway/v1/inference_pb.js";
import type { Deps } from "../deps.js";
import { chatCompletions } from "./chat-completions.js";
import { createEmbeddings } from "./embeddings.js";
import { createInferenceRuntime } from "./inference-runtime.js";

/** POST /chat/completions and POST /embeddings. */
export function inferenceService(deps: Deps): ServiceImpl<typeof InferenceService> {
  const runtime = createInferenceRuntime(deps);
  return {
    createChatCompletion: (req, ctx) => chatCompletions(runtime, req, ctx),
    createEmbedding: (req, ctx) => createEmbeddings(runtime, req, ctx),
  };
}

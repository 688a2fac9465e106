import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { CreateResponseRequest, ResponseStreamEventSchema } from "../../gen/gateway/v1/inference_pb.js";
import { chatToResponse, responsesToChat } from "./formats/responses-format.js";
import { chatStreamToResponseEvents } from "./formats/responses-stream.js";
import type { InferenceRuntime } from "./inference-call.js";
import { translatedChat, type ChatTranslation } from "./translated-chat.js";

/** POST /responses: the OpenAI Responses API on the chat completions pipeline (see translated-chat.ts). */
const RESPONSES: ChatTranslation = { toChat: responsesToChat, fromCompletion: chatToResponse, fromChunks: chatStreamToResponseEvents };

export async function* createResponse(runtime: InferenceRuntime, req: CreateResponseRequest, ctx: HandlerContext): AsyncGenerator<MessageInitShape<typeof ResponseStreamEventSchema>> {
  for await (const out of translatedChat(runtime, req.body, ctx, RESPONSES)) {
    yield { event: out.kind === "reply" ? { case: "response", value: out.value } : { case: "streamEvent", value: out.value } };
  }
}

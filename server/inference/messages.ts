import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { CreateMessageRequest, MessageStreamEventSchema } from "../../gen/gateway/v1/inference_pb.js";
import { chatToMessage, messagesToChat } from "./formats/messages-format.js";
import { chatStreamToMessageEvents } from "./formats/messages-stream.js";
import type { InferenceRuntime } from "./inference-call.js";
import { translatedChat, type ChatTranslation } from "./translated-chat.js";

/**
 * POST /messages: the Anthropic Messages API on the chat completions pipeline (see
 * translated-chat.ts). Errors keep the gateway's error envelope rather than Anthropic's.
 */
const MESSAGES: ChatTranslation = { toChat: messagesToChat, fromCompletion: chatToMessage, fromChunks: chatStreamToMessageEvents };

export async function* createMessage(runtime: InferenceRuntime, req: CreateMessageRequest, ctx: HandlerContext): AsyncGenerator<MessageInitShape<typeof MessageStreamEventSchema>> {
  for await (const out of translatedChat(runtime, req.body, ctx, MESSAGES)) {
    yield { event: out.kind === "reply" ? { case: "message", value: out.value } : { case: "streamEvent", value: out.value } };
  }
}

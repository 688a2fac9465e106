import {
  InternApprovalMode,
  InternMessageRole,
  type InternChatRequest,
} from "../../../gen/gateway/v1/intern_chat_pb.js";
import type { ApprovalMode } from "../../../wire/host-protocol.js";
import { badRequest } from "./intern-chat-errors.js";

/**
 * What a chat request asks for (docs/api/interns.md): a prompt (a new run, or a message that steers the
 * session's open run), or the answer to a pending question. The intern keeps the conversation
 * itself, so only the last user message of a prompt counts: clients that send the whole history,
 * as OpenAI clients do, work unchanged. A reply is recognised by its tool message.
 */
export type ChatTurn =
  | { kind: "prompt"; prompt: string; sessionId: string | undefined; approvalMode: ApprovalMode }
  | { kind: "answer"; sessionId: string; toolCallId: string; answer: string };

export function chatTurnOf(req: InternChatRequest): ChatTurn {
  if (req.stream !== true) throw badRequest("stream must be true: an intern chat is a server-sent event stream");
  const toolMessages = req.messages.filter((message) => message.role === InternMessageRole.TOOL);
  if (toolMessages.length > 1) throw badRequest("a reply answers one question: send one tool message");
  const [tool] = toolMessages;
  if (tool) {
    if (tool.toolCallId === undefined)
      throw badRequest("the tool message needs tool_call_id: the id of the question's tool call");
    if (tool.content === undefined) throw badRequest("the tool message needs content: the answer");
    if (req.sessionId === undefined)
      throw badRequest("a reply needs session_id, from the final chunk of the previous response");
    const echoes = req.messages.filter(
      (message) => message.role === InternMessageRole.ASSISTANT && message.toolCalls.length > 0,
    );
    if (echoes.length > 0 && !echoes.some((message) => message.toolCalls.some((call) => call.id === tool.toolCallId))) {
      throw badRequest(
        `the assistant message must echo the tool call ${tool.toolCallId} that the tool message answers`,
      );
    }
    return { kind: "answer", sessionId: req.sessionId, toolCallId: tool.toolCallId, answer: tool.content };
  }
  const last = req.messages.at(-1);
  if (last?.role !== InternMessageRole.USER)
    throw badRequest(
      "the last message must be a user prompt, or the request must answer a question with a tool message",
    );
  if (last.content === undefined || last.content.trim() === "")
    throw badRequest("the user message needs non-empty content");
  return {
    kind: "prompt",
    prompt: last.content,
    sessionId: req.sessionId,
    approvalMode: req.approvalMode === InternApprovalMode.MANUAL ? "manual" : "auto",
  };
}

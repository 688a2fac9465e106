import { parseObject, plan, sendEvents, type Exchange, type MockReplyInput } from "./mock-plan.js";
import { sendJson, type Json } from "./mock-wire.js";

/**
 * Anthropic's Messages API as the mock speaks it: a message as JSON, or its events over SSE (thinking, text, tool
 * use).
 */

const STOP_REASON = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" } as const;

/** The parts of an Anthropic answer that its JSON and streamed forms share. */
function anthropicAnswer(x: MockReplyInput) {
  const { body, model, rule } = x;
  const p = plan(body, rule, model, body.max_tokens);
  const id = `msg_mock_${x.id}`;
  const toolUse = p.toolCall
    ? { type: "tool_use", id: `toolu_mock_${x.id}`, name: p.toolCall.name, input: parseObject(p.toolCall.arguments) }
    : undefined;
  const usage = {
    input_tokens: p.promptTokens - p.cacheReadTokens - p.cacheWriteTokens,
    output_tokens: p.completionTokens,
    cache_creation_input_tokens: p.cacheWriteTokens,
    cache_read_input_tokens: p.cacheReadTokens,
  };
  const hasText = p.words.length > 0 || !toolUse;
  return { p, id, toolUse, usage, hasText };
}

/** The non-streamed `message`. */
export function anthropicMessage(x: MockReplyInput): Json {
  const { p, id, toolUse, usage, hasText } = anthropicAnswer(x);
  const content: Json[] = [];
  if (p.reasoningWords.length > 0)
    content.push({ type: "thinking", thinking: p.reasoningWords.join(""), signature: "mock-signature" });
  if (hasText) content.push({ type: "text", text: p.words.join("") });
  if (toolUse) content.push(toolUse);
  return {
    id,
    type: "message",
    role: "assistant",
    model: x.model,
    content,
    stop_reason: STOP_REASON[p.finish],
    stop_sequence: null,
    usage,
    ...x.rule?.answerFields,
  };
}

/** `/messages`: the message as JSON, or streamed as events with `stream: true`. */
export function anthropicMessages(x: Exchange): void {
  const { body, model } = x;
  if (body.stream !== true) return sendJson(x.res, 200, anthropicMessage(x));
  const { p, id, toolUse, usage, hasText } = anthropicAnswer(x);
  const event = (name: string, data: Json) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const events = [
    event("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
        ...x.rule?.answerFields,
      },
    }),
    event("ping", {}),
  ];
  let index = 0;
  if (p.reasoningWords.length > 0) {
    events.push(event("content_block_start", { index, content_block: { type: "thinking", thinking: "" } }));
    for (const word of p.reasoningWords)
      events.push(event("content_block_delta", { index, delta: { type: "thinking_delta", thinking: word } }));
    events.push(
      event("content_block_delta", { index, delta: { type: "signature_delta", signature: "mock-signature" } }),
    );
    events.push(event("content_block_stop", { index }));
    index += 1;
  }
  if (hasText) {
    events.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const word of p.words)
      events.push(event("content_block_delta", { index, delta: { type: "text_delta", text: word } }));
    events.push(event("content_block_stop", { index }));
    index += 1;
  }
  if (toolUse && p.toolCall) {
    const args = p.toolCall.arguments;
    const half = Math.ceil(args.length / 2);
    events.push(event("content_block_start", { index, content_block: { ...toolUse, input: {} } }));
    for (const part of [args.slice(0, half), args.slice(half)]) {
      if (part !== "")
        events.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } }));
    }
    events.push(event("content_block_stop", { index }));
  }
  events.push(
    event("message_delta", {
      delta: { stop_reason: STOP_REASON[p.finish], stop_sequence: null },
      usage: { output_tokens: p.completionTokens },
    }),
  );
  events.push(event("message_stop", {}));
  sendEvents(x, events, (type, message) => event("error", { error: { type, message } }));
}

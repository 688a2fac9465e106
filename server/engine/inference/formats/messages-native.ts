import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../../providers/json-shape.js";
import type { NativeAnswers, NativeAssembler } from "../native-route.js";

/**
 * Messages answers an Anthropic endpoint gave natively (server/engine/inference/native-route.ts).
 * The gateway sets `id` to its generation id and `model` to the catalog's, as a translated
 * Messages answer has them, and adds the call's `cost` to the usage (a stream's on
 * `message_delta`, whose usage is the final one). A stream ends at `message_stop`.
 */
export const MESSAGES_NATIVE: NativeAnswers = {
  isNative: (answer) => answer.type === "message",
  rewrite(answer, ids) {
    answer.id = ids.generationId;
    answer.model = ids.model;
  },
  rewriteEvent(event, ids) {
    if (event.type === "message_start" && isObject(event.message)) MESSAGES_NATIVE.rewrite(event.message, ids);
  },
  isTerminal: (event) => event.type === "message_stop",
  carriesUsage: (event) => event.type === "message_delta",
  usageOf: (answerOrEvent) => (isObject(answerOrEvent.usage) ? answerOrEvent.usage : undefined),
  text(answer) {
    let text = "";
    for (const block of Array.isArray(answer.content) ? answer.content : [])
      if (isObject(block) && block.type === "text" && typeof block.text === "string") text += block.text;
    return text;
  },
  eventText(event) {
    const delta = event.type === "content_block_delta" && isObject(event.delta) ? event.delta : undefined;
    return delta?.type === "text_delta" && typeof delta.text === "string" ? delta.text : "";
  },
  assembler: () => new MessageAssembler(),
  replay: replayMessage,
};

/** The message a stream's events make: blocks by index, their deltas joined, tool input parsed at the block's end. */
class MessageAssembler implements NativeAssembler {
  private message: JsonObject | undefined;
  private readonly blocks: JsonObject[] = [];
  private readonly inputs = new Map<number, string>();
  private stopped = false;

  add(event: JsonObject): void {
    const index = typeof event.index === "number" ? event.index : 0;
    switch (event.type) {
      case "message_start":
        this.message = isObject(event.message) ? structuredClone(event.message) : {};
        return;
      case "content_block_start":
        if (isObject(event.content_block)) this.blocks[index] = structuredClone(event.content_block);
        return;
      case "content_block_delta":
        this.delta(index, isObject(event.delta) ? event.delta : {});
        return;
      case "content_block_stop": {
        const input = this.inputs.get(index);
        const block = this.blocks[index];
        if (input !== undefined && block) block.input = parsedObject(input);
        return;
      }
      case "message_delta":
        if (this.message) {
          if (isObject(event.delta)) Object.assign(this.message, event.delta);
          if (isObject(event.usage))
            this.message.usage = { ...(isObject(this.message.usage) ? this.message.usage : {}), ...event.usage };
        }
        return;
      case "message_stop":
        this.stopped = true;
        return;
    }
  }

  answer(): JsonObject | undefined {
    if (!this.message || !this.stopped) return undefined;
    return { ...this.message, content: this.blocks.filter((block) => block !== undefined) };
  }

  private delta(index: number, delta: JsonObject): void {
    const block = this.blocks[index];
    if (!block) return;
    const append = (field: string, text: JsonValue | undefined) => {
      if (typeof text === "string") block[field] = (typeof block[field] === "string" ? block[field] : "") + text;
    };
    if (delta.type === "text_delta") append("text", delta.text);
    else if (delta.type === "thinking_delta") append("thinking", delta.thinking);
    else if (delta.type === "signature_delta") append("signature", delta.signature);
    else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string")
      this.inputs.set(index, (this.inputs.get(index) ?? "") + delta.partial_json);
    else if (delta.type === "citations_delta" && delta.citation !== undefined)
      block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
  }
}

function parsedObject(text: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(text === "" ? "{}" : text);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** A stored message as the events of its stream: each block started, its content in one delta, stopped. */
function replayMessage(answer: JsonObject): JsonObject[] {
  const usage = isObject(answer.usage) ? answer.usage : {};
  const events: JsonObject[] = [
    {
      type: "message_start",
      message: {
        ...answer,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 0 },
      },
    },
  ];
  const blocks = Array.isArray(answer.content) ? answer.content : [];
  blocks.forEach((block, index) => {
    if (!isObject(block)) return;
    const [start, deltas] = blockParts(block);
    events.push({ type: "content_block_start", index, content_block: start });
    for (const delta of deltas) events.push({ type: "content_block_delta", index, delta });
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: answer.stop_reason ?? "end_turn", stop_sequence: answer.stop_sequence ?? null },
    usage,
  });
  events.push({ type: "message_stop" });
  return events;
}

function blockParts(block: JsonObject): [JsonObject, JsonObject[]] {
  if (block.type === "text" && typeof block.text === "string")
    return [{ ...block, text: "" }, [{ type: "text_delta", text: block.text }]];
  if (block.type === "thinking" && typeof block.thinking === "string") {
    const deltas: JsonObject[] = [{ type: "thinking_delta", thinking: block.thinking }];
    if (typeof block.signature === "string") deltas.push({ type: "signature_delta", signature: block.signature });
    return [{ ...block, thinking: "", signature: "" }, deltas];
  }
  if (block.type === "tool_use" || block.type === "server_tool_use")
    return [{ ...block, input: {} }, [{ type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) }]];
  return [block, []];
}

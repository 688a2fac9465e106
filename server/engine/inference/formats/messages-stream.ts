import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { gatewayError } from "../../../../wire/errors.js";
import { isObject } from "../../providers/json-shape.js";
import { copyProviderFields, firstChoice, type StreamIds } from "./format-fields.js";
import { stopReasonOf } from "../../providers/anthropic/stop-reasons.js";
import { messageUsage } from "./messages-format.js";

/**
 * A chat completion chunk stream as Anthropic Messages stream events (`message_start`,
 * `content_block_start|delta|stop`, `message_delta`, `message_stop`), each with `type`. Nothing is
 * produced before the first chunk, so a call that fails before it has begun still answers with an
 * HTTP error status. Anthropic streams one content block at a time: text and each tool call are
 * blocks in the order they start. Chat reports usage only at the end, so `message_start` counts 0
 * tokens and `message_delta` carries the whole usage (input tokens included, as Anthropic's does).
 */
export async function* chatStreamToMessageEvents(
  chunks: AsyncIterable<JsonObject>,
  ids: StreamIds,
): AsyncGenerator<JsonObject> {
  let stream: MessageStream | undefined;
  for await (const chunk of chunks) {
    if (!stream) {
      stream = new MessageStream();
      const start = messageStart(
        ids.id ?? (typeof chunk.id === "string" ? chunk.id : ""),
        typeof chunk.model === "string" ? chunk.model : "",
      );
      // The provider's own fields, as on a plain answer: the message is whole only here.
      if (isObject(start.message)) copyProviderFields(chunk, start.message);
      yield start;
    }
    yield* stream.chunk(chunk);
  }
  if (!stream) {
    stream = new MessageStream();
    yield messageStart(ids.id ?? "", "");
  }
  yield* stream.finish();
}

function messageStart(id: string, model: string): JsonObject {
  const usage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  return {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  };
}

type OpenBlock = { kind: "text"; index: number } | { kind: "tool"; index: number; toolIndex: number };

class MessageStream {
  private blocks = 0;
  private open: OpenBlock | undefined;
  /** Chat tool call indexes whose block has been closed. */
  private readonly closedTools = new Set<number>();
  private stopReason: string | null = null;
  private usage: JsonValue | undefined;

  chunk(chunk: JsonObject): JsonObject[] {
    const events: JsonObject[] = [];
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice = firstChoice(chunk);
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === "string" && delta.content !== "") {
      if (this.open?.kind !== "text")
        events.push(...this.close(), this.startBlock({ kind: "text", index: this.blocks }, { type: "text", text: "" }));
      events.push(this.blockDelta({ type: "text_delta", text: delta.content }));
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : [])
      if (isObject(call)) events.push(...this.toolDelta(call));
    const reason = stopReasonOf(choice);
    if (reason !== null && typeof choice.finish_reason === "string") this.stopReason = reason;
    return events;
  }

  finish(): JsonObject[] {
    return [
      ...this.close(),
      {
        type: "message_delta",
        delta: { stop_reason: this.stopReason ?? "end_turn", stop_sequence: null },
        usage: messageUsage(this.usage),
      },
      { type: "message_stop" },
    ];
  }

  private toolDelta(call: JsonObject): JsonObject[] {
    const events: JsonObject[] = [];
    const toolIndex = typeof call.index === "number" ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    if (this.open?.kind !== "tool" || this.open.toolIndex !== toolIndex) {
      // Chat providers stream one call after the other; a block once stopped cannot be reopened.
      if (this.closedTools.has(toolIndex))
        throw gatewayError(502, "The provider interleaved tool calls, which the Messages stream format cannot carry");
      events.push(...this.close());
      const block = {
        type: "tool_use",
        id: typeof call.id === "string" ? call.id : "",
        name: typeof fn.name === "string" ? fn.name : "",
        input: {},
      };
      events.push(this.startBlock({ kind: "tool", index: this.blocks, toolIndex }, block));
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "")
      events.push(this.blockDelta({ type: "input_json_delta", partial_json: fn.arguments }));
    return events;
  }

  private startBlock(block: OpenBlock, content: JsonObject): JsonObject {
    this.open = block;
    this.blocks += 1;
    return { type: "content_block_start", index: block.index, content_block: content };
  }

  private blockDelta(delta: JsonObject): JsonObject {
    return { type: "content_block_delta", index: this.open?.index ?? 0, delta };
  }

  private close(): JsonObject[] {
    if (!this.open) return [];
    if (this.open.kind === "tool") this.closedTools.add(this.open.toolIndex);
    const stop = { type: "content_block_stop", index: this.open.index };
    this.open = undefined;
    return [stop];
  }
}

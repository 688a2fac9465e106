import type { JsonObject } from "@bufbuild/protobuf";
import { finishReasonOf } from "./stop-reasons.js";
import { anthropicTokens, type AnthropicTokens } from "./usage.js";
import { chatUsageJson, upstreamUsage } from "../cache-split-usage.js";
import { deltaChunk, usageChunk, type ChunkIdentity } from "../chat-chunks.js";
import { isObject, stringOr } from "../json-shape.js";
import { copyProviderAnswerFields } from "../provider-fields.js";
import { UpstreamError, type UpstreamUsage } from "../provider.js";

/** A non-streamed Anthropic message as an OpenAI `chat.completion`. */
export function chatCompletionFromMessage(message: JsonObject): { body: JsonObject; usage: UpstreamUsage | undefined } {
  if (!Array.isArray(message.content)) throw new UpstreamError("protocol", "the upstream answer has no content array");
  let text = "";
  let reasoning = "";
  const toolCalls: JsonObject[] = [];
  for (const block of message.content) {
    if (!isObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "thinking" && typeof block.thinking === "string") reasoning += block.thinking;
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: stringOr(block.id, ""),
        index: toolCalls.length,
        type: "function",
        function: { name: stringOr(block.name, ""), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const assistant: JsonObject = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text };
  if (reasoning !== "") assistant.reasoning = reasoning;
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  const stopReason = stringOr(message.stop_reason, "end_turn");
  const tokens = isObject(message.usage) ? anthropicTokens(message.usage) : undefined;
  const body: JsonObject = {
    id: stringOr(message.id, ""),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: stringOr(message.model, ""),
    choices: [
      {
        index: 0,
        message: assistant,
        finish_reason: finishReasonOf(stopReason),
        native_finish_reason: stopReason,
        logprobs: null,
      },
    ],
  };
  if (tokens) body.usage = chatUsageJson(tokens);
  copyProviderAnswerFields(message, MESSAGE_FIELDS, body);
  return { body, usage: tokens ? upstreamUsage(tokens) : undefined };
}

/**
 * The message fields the translation reads; Anthropic's others (`container`, …) reach the chat
 * answer as they came.
 */
const MESSAGE_FIELDS = new Set(["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"]);

/**
 * Anthropic stream events → OpenAI `chat.completion.chunk`s, one event at a time. Tool use
 * blocks become tool_calls numbered in their order of appearance (OpenAI's `index`), whatever
 * the content block index was.
 */
export class AnthropicStreamTranslator implements ChunkIdentity {
  id = "";
  model = "";
  readonly created = Math.floor(Date.now() / 1000);
  private tokens: AnthropicTokens | undefined;
  private readonly toolIndexOfBlock = new Map<number, number>();
  /** True once message_stop arrived: the stream is complete. */
  stopped = false;

  usage(): UpstreamUsage | undefined {
    return this.tokens ? upstreamUsage(this.tokens) : undefined;
  }

  /** The chunks one event yields (often none). `data` is the event's JSON payload. */
  translate(event: string, data: JsonObject): JsonObject[] {
    switch (event) {
      case "message_start": {
        const message = isObject(data.message) ? data.message : {};
        this.id = stringOr(message.id, "");
        this.model = stringOr(message.model, "");
        this.tokens = anthropicTokens(message.usage);
        const first = this.chunk({ role: "assistant", content: "" });
        copyProviderAnswerFields(message, MESSAGE_FIELDS, first);
        return [first];
      }
      case "content_block_start": {
        const block = isObject(data.content_block) ? data.content_block : {};
        if (block.type === "tool_use") {
          const toolIndex = this.toolIndexOfBlock.size;
          this.toolIndexOfBlock.set(blockIndex(data), toolIndex);
          return [
            this.chunk({
              tool_calls: [
                {
                  index: toolIndex,
                  id: stringOr(block.id, ""),
                  type: "function",
                  function: { name: stringOr(block.name, ""), arguments: "" },
                },
              ],
            }),
          ];
        }
        if (block.type === "text" && typeof block.text === "string" && block.text !== "")
          return [this.chunk({ content: block.text })];
        return [];
      }
      case "content_block_delta": {
        const delta = isObject(data.delta) ? data.delta : {};
        if (delta.type === "text_delta" && typeof delta.text === "string") return [this.chunk({ content: delta.text })];
        if (delta.type === "thinking_delta" && typeof delta.thinking === "string")
          return [this.chunk({ reasoning: delta.thinking })];
        if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
          const toolIndex = this.toolIndexOfBlock.get(blockIndex(data));
          if (toolIndex === undefined)
            throw new UpstreamError("protocol", "the upstream sent tool input for an unknown content block");
          return [this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })];
        }
        return [];
      }
      case "message_delta": {
        const delta = isObject(data.delta) ? data.delta : {};
        this.tokens = anthropicTokens(data.usage, this.tokens);
        if (typeof delta.stop_reason !== "string") return [];
        return [this.chunk({}, delta.stop_reason)];
      }
      case "message_stop":
        this.stopped = true;
        // As OpenAI does with stream_options.include_usage: a last chunk with no choices.
        return this.tokens ? [usageChunk(this, chatUsageJson(this.tokens))] : [];
      default:
        // ping, content_block_stop, and event types Anthropic may add later.
        return [];
    }
  }

  private chunk(delta: JsonObject, stopReason?: string): JsonObject {
    return deltaChunk(
      this,
      delta,
      stopReason === undefined ? undefined : { reason: finishReasonOf(stopReason), native: stopReason },
    );
  }
}

function blockIndex(data: JsonObject): number {
  return typeof data.index === "number" ? data.index : 0;
}

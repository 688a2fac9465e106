import type { JsonObject } from "@bufbuild/protobuf";
import { isObject, stringOr } from "../json-shape.js";
import { UpstreamError, type UpstreamUsage } from "../provider.js";
import { finishReasonOf } from "./stop-reasons.js";
import { type BedrockTokens, bedrockTokens } from "./usage.js";
import { chatUsageJson, upstreamUsage } from "../cache-split-usage.js";
import { deltaChunk, usageChunk, type ChunkIdentity } from "../chat-chunks.js";

/**
 * ConverseStream events → OpenAI `chat.completion.chunk`s, one event at a time. Tool use blocks
 * become tool_calls numbered in their order of appearance (OpenAI's `index`), whatever the
 * content block index was. Usage comes last, in the metadata event after messageStop.
 */
export class ConverseStreamTranslator implements ChunkIdentity {
  readonly created = Math.floor(Date.now() / 1000);
  private tokens: BedrockTokens | undefined;
  private readonly toolIndexOfBlock = new Map<number, number>();
  /** True once messageStop arrived: the answer is complete (the metadata event may follow). */
  stopped = false;

  constructor(
    readonly id: string,
    readonly model: string,
  ) {}

  usage(): UpstreamUsage | undefined {
    return this.tokens ? upstreamUsage(this.tokens) : undefined;
  }

  /** The chunks one event yields (often none). `data` is the event's JSON payload. */
  translate(event: string, data: JsonObject): JsonObject[] {
    switch (event) {
      case "messageStart":
        return [this.chunk({ role: "assistant", content: "" })];
      case "contentBlockStart": {
        const start = isObject(data.start) ? data.start : {};
        if (!isObject(start.toolUse)) return [];
        const toolIndex = this.toolIndexOfBlock.size;
        this.toolIndexOfBlock.set(blockIndex(data), toolIndex);
        const use = start.toolUse;
        return [
          this.chunk({
            tool_calls: [
              {
                index: toolIndex,
                id: stringOr(use.toolUseId, ""),
                type: "function",
                function: { name: stringOr(use.name, ""), arguments: "" },
              },
            ],
          }),
        ];
      }
      case "contentBlockDelta": {
        const delta = isObject(data.delta) ? data.delta : {};
        if (typeof delta.text === "string") return delta.text === "" ? [] : [this.chunk({ content: delta.text })];
        if (isObject(delta.reasoningContent) && typeof delta.reasoningContent.text === "string")
          return [this.chunk({ reasoning: delta.reasoningContent.text })];
        if (isObject(delta.toolUse) && typeof delta.toolUse.input === "string") {
          const toolIndex = this.toolIndexOfBlock.get(blockIndex(data));
          if (toolIndex === undefined)
            throw new UpstreamError("protocol", "the upstream sent tool input for an unknown content block");
          return [this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.toolUse.input } }] })];
        }
        // A reasoning signature, redacted reasoning, citations: nothing chat carries.
        return [];
      }
      case "messageStop": {
        this.stopped = true;
        const stopReason = stringOr(data.stopReason, "end_turn");
        return [this.chunk({}, stopReason)];
      }
      case "metadata":
        this.tokens = bedrockTokens(data.usage) ?? this.tokens;
        // As OpenAI does with stream_options.include_usage: a last chunk with no choices.
        return this.tokens ? [usageChunk(this, chatUsageJson(this.tokens))] : [];
      default:
        // contentBlockStop, and event types Bedrock may add later.
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
  return typeof data.contentBlockIndex === "number" ? data.contentBlockIndex : 0;
}

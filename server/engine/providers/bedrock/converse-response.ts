import type { JsonObject } from "@bufbuild/protobuf";
import { isObject, stringOr } from "../json-shape.js";
import { UpstreamError, type UpstreamUsage } from "../provider.js";
import { finishReasonOf } from "./stop-reasons.js";
import { bedrockTokens } from "./usage.js";
import { chatUsageJson, upstreamUsage } from "../cache-split-usage.js";
import { copyProviderAnswerFields } from "../provider-fields.js";

/**
 * The answer fields the translation reads; Converse's others (`trace`, `performanceConfig`, …)
 * reach the chat answer as they came.
 */
const ANSWER_FIELDS = new Set(["output", "stopReason", "usage"]);

/**
 * A Converse answer (`{output: {message}, stopReason, usage}`) as an OpenAI `chat.completion`.
 * Converse answers carry no id or model: the caller passes the request id Bedrock sent as a
 * header, and the model it called.
 */
export function chatCompletionFromConverse(
  answer: JsonObject,
  id: string,
  model: string,
): { body: JsonObject; usage: UpstreamUsage | undefined } {
  const output = isObject(answer.output) ? answer.output : {};
  const message = isObject(output.message) ? output.message : undefined;
  if (!message || !Array.isArray(message.content))
    throw new UpstreamError("protocol", "the upstream answer has no output message");
  let text = "";
  let reasoning = "";
  const toolCalls: JsonObject[] = [];
  for (const block of message.content) {
    if (!isObject(block)) continue;
    if (typeof block.text === "string") text += block.text;
    else if (isObject(block.reasoningContent) && isObject(block.reasoningContent.reasoningText))
      reasoning += stringOr(block.reasoningContent.reasoningText.text, "");
    else if (isObject(block.toolUse)) {
      const use = block.toolUse;
      toolCalls.push({
        id: stringOr(use.toolUseId, ""),
        index: toolCalls.length,
        type: "function",
        function: { name: stringOr(use.name, ""), arguments: JSON.stringify(use.input ?? {}) },
      });
    }
  }
  const assistant: JsonObject = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text };
  if (reasoning !== "") assistant.reasoning = reasoning;
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  const stopReason = stringOr(answer.stopReason, "end_turn");
  const tokens = bedrockTokens(answer.usage);
  const body: JsonObject = {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
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
  copyProviderAnswerFields(answer, ANSWER_FIELDS, body);
  return { body, usage: tokens ? upstreamUsage(tokens) : undefined };
}

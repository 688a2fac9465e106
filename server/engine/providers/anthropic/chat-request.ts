import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../json-shape.js";
import { arrayOf, assistantToolCalls, functionTool, unsupported } from "../chat-request-parts.js";
import { sourceOfMediaUrl } from "../media-source.js";
import { anthropicToolChoiceType } from "./tool-choice.js";
import { copyProviderRequestFields } from "../provider-fields.js";

/** Anthropic requires `max_tokens`; OpenAI callers often leave it out. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * An OpenAI chat request as an Anthropic Messages request. Chat parameters Anthropic has no
 * counterpart for (logprobs, n, seed, penalties, response_format, …) are not sent: whether an
 * endpoint may serve a request that uses them is routing's decision (supported_parameters).
 * Reasoning (`reasoning_effort`, `reasoning`) becomes extended thinking; a field that is not
 * chat's (`thinking`, `mcp_servers`, `container`, a field Anthropic adds later) is sent as it came
 * (provider-fields.ts). Content this API cannot carry throws "unsupported".
 */
export function anthropicRequest(request: JsonObject, model: string, stream: boolean): JsonObject {
  const system: JsonObject[] = [];
  const messages: JsonObject[] = [];
  for (const message of arrayOf(request.messages)) {
    if (!isObject(message)) throw unsupported("a message is not an object");
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...textBlocks(message.content));
        break;
      case "user":
        pushMerged(messages, "user", userBlocks(message.content));
        break;
      case "assistant": {
        const blocks = assistantBlocks(message);
        if (blocks.length > 0) messages.push({ role: "assistant", content: blocks });
        break;
      }
      case "tool":
        pushMerged(messages, "user", [toolResult(message)]);
        break;
      default:
        throw unsupported(`message role ${JSON.stringify(message.role)} is not supported`);
    }
  }

  const out: JsonObject = { model, messages, max_tokens: maxTokens(request) };
  const thinking = thinkingOf(request, out.max_tokens as number);
  if (thinking) out.thinking = thinking;
  if (system.length > 0) out.system = system;
  if (typeof request.temperature === "number") {
    // OpenAI's range is 0–2, Anthropic's 0–1.
    out.temperature = Math.min(Math.max(request.temperature, 0), 1);
  }
  if (typeof request.top_p === "number") out.top_p = request.top_p;
  if (typeof request.top_k === "number") out.top_k = request.top_k;
  const stop =
    typeof request.stop === "string" ? [request.stop] : arrayOf(request.stop).filter((s) => typeof s === "string");
  if (stop.length > 0) out.stop_sequences = stop;
  const tools = arrayOf(request.tools).map(anthropicTool);
  if (tools.length > 0) out.tools = tools;
  const toolChoice = anthropicToolChoice(request.tool_choice, request.parallel_tool_calls === false);
  // Anthropic refuses tool_choice without tools.
  if (toolChoice && tools.length > 0) out.tool_choice = toolChoice;
  if (stream) out.stream = true;
  copyProviderRequestFields(request, out);
  return out;
}

/** OpenRouter's shares of `max_tokens` for an effort level, and Anthropic's smallest thinking budget. */
const EFFORT_SHARE: Record<string, number> = { low: 0.2, medium: 0.5, high: 0.8 };
const MIN_THINKING_BUDGET = 1024;

/**
 * Chat's reasoning request as Anthropic's extended thinking: a token budget (`reasoning.max_tokens`)
 * as it is; an effort (`reasoning_effort`, `reasoning.effort`, or `reasoning.enabled`: medium) as
 * its share of `max_tokens`, at least 1024, and only when that leaves room to answer; `none`,
 * `minimal` or `reasoning.enabled: false` as thinking disabled.
 */
function thinkingOf(request: JsonObject, maxTokens: number): JsonObject | undefined {
  const reasoning = isObject(request.reasoning) ? request.reasoning : {};
  if (reasoning.enabled === false) return { type: "disabled" };
  if (typeof reasoning.max_tokens === "number" && Number.isInteger(reasoning.max_tokens))
    return { type: "enabled", budget_tokens: reasoning.max_tokens };
  const effort =
    typeof reasoning.effort === "string"
      ? reasoning.effort
      : typeof request.reasoning_effort === "string"
        ? request.reasoning_effort
        : reasoning.enabled === true
          ? "medium"
          : undefined;
  if (effort === undefined) return undefined;
  const share = EFFORT_SHARE[effort];
  if (share === undefined) return effort === "none" || effort === "minimal" ? { type: "disabled" } : undefined;
  const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens * share));
  return budget < maxTokens ? { type: "enabled", budget_tokens: budget } : undefined;
}

function maxTokens(request: JsonObject): number {
  for (const value of [request.max_completion_tokens, request.max_tokens]) {
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  }
  return ANTHROPIC_DEFAULT_MAX_TOKENS;
}

/**
 * Tool results answer the assistant turn before them and must all sit in the next user turn,
 * first; a user message right after them joins that turn too.
 */
function pushMerged(messages: JsonObject[], role: "user", blocks: JsonObject[]): void {
  const last = messages[messages.length - 1];
  if (
    last &&
    last.role === role &&
    Array.isArray(last.content) &&
    last.content.some((b) => isObject(b) && b.type === "tool_result")
  ) {
    last.content.push(...blocks);
    return;
  }
  messages.push({ role, content: blocks });
}

function userBlocks(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return arrayOf(content).flatMap(contentPart);
}

function assistantBlocks(message: JsonObject): JsonObject[] {
  const blocks: JsonObject[] =
    typeof message.content === "string"
      ? nonEmptyText(message.content)
      : arrayOf(message.content).flatMap((part) => {
          if (isObject(part) && part.type === "refusal" && typeof part.refusal === "string")
            return nonEmptyText(part.refusal);
          return contentPart(part);
        });
  for (const { id, name, input } of assistantToolCalls(message)) blocks.push({ type: "tool_use", id, name, input });
  return blocks;
}

function toolResult(message: JsonObject): JsonObject {
  if (typeof message.tool_call_id !== "string") throw unsupported("a tool message needs a tool_call_id");
  const content = typeof message.content === "string" ? message.content : arrayOf(message.content).flatMap(contentPart);
  return { type: "tool_result", tool_use_id: message.tool_call_id, content };
}

/** One OpenAI content part as Anthropic blocks (empty text yields none: Anthropic refuses it). */
function contentPart(part: JsonValue): JsonObject[] {
  if (!isObject(part)) throw unsupported("a content part is not an object");
  switch (part.type) {
    case "text": {
      if (typeof part.text !== "string") throw unsupported("a text part has no text");
      const blocks = nonEmptyText(part.text);
      if (blocks[0] && isObject(part.cache_control)) blocks[0].cache_control = part.cache_control;
      return blocks;
    }
    case "image_url": {
      const url = isObject(part.image_url) ? part.image_url.url : part.image_url;
      if (typeof url !== "string") throw unsupported("an image_url part has no url");
      return [{ type: "image", source: mediaSource(url) }];
    }
    case "file": {
      const data = isObject(part.file) ? part.file.file_data : undefined;
      if (typeof data !== "string") throw unsupported("a file part needs file_data for this provider");
      return [{ type: "document", source: mediaSource(data) }];
    }
    default:
      throw unsupported(`content part type ${JSON.stringify(part.type)} is not supported by this provider`);
  }
}

function mediaSource(url: string): JsonObject {
  const source = sourceOfMediaUrl(url);
  if (!source) throw unsupported("media must be an http(s) URL or a base64 data: URL");
  return source;
}

function textBlocks(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === "string") return nonEmptyText(content);
  return arrayOf(content).flatMap((part) => {
    if (!isObject(part) || part.type !== "text") throw unsupported("system messages may only hold text");
    return contentPart(part);
  });
}

function nonEmptyText(text: string): JsonObject[] {
  return text === "" ? [] : [{ type: "text", text }];
}

function anthropicTool(tool: JsonValue): JsonObject {
  const { name, description, parameters } = functionTool(tool);
  const out: JsonObject = { name, input_schema: parameters ?? { type: "object", properties: {} } };
  if (description !== undefined) out.description = description;
  return out;
}

function anthropicToolChoice(choice: JsonValue | undefined, noParallel: boolean): JsonObject | undefined {
  let out: JsonObject | undefined;
  const type = typeof choice === "string" ? anthropicToolChoiceType(choice) : undefined;
  // Anthropic's "none" takes no parallel-use flag.
  if (type === "none") return { type };
  if (type !== undefined) out = { type };
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string")
    out = { type: "tool", name: choice.function.name };
  else if (choice !== undefined && choice !== null)
    throw unsupported("tool_choice is not one of auto, none, required or a function");
  if (noParallel) (out ??= { type: "auto" }).disable_parallel_tool_use = true;
  return out;
}

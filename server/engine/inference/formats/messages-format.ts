/**
 * The Anthropic Messages API as the chat completions format, both ways, for providers other than
 * Anthropic (which gets the body as sent: docs/providers.md has both tables); the mirror image of
 * server/engine/providers/anthropic/chat-request.ts and chat-response.ts, which translate for the
 * upstream side. Every field with a chat counterpart is mapped (`stop_sequences` → `stop`,
 * `metadata.user_id` → `user`, `thinking` → `reasoning`, `top_k`, tool choices); every field the
 * translation does not read reaches chat as sent. Thinking blocks a client echoes back are dropped
 * (chat carries no signed thinking), and a tool result's `is_error` is dropped (chat tool messages
 * have no such flag). Anthropic's own tools and content chat cannot carry are untranslatable: a
 * 400 naming them when no Anthropic endpoint serves the call.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { gatewayError } from "../../../../wire/errors.js";
import { dataUrl } from "../../providers/media-source.js";
import { stopReasonOf } from "../../providers/anthropic/stop-reasons.js";
import { chatToolChoice } from "../../providers/anthropic/tool-choice.js";
import { anthropicUsageJson, tokensOfChatUsage } from "../../providers/anthropic/usage.js";
import { isObject } from "../../providers/json-shape.js";
import {
  copyProviderFields,
  copyRoutingFields,
  copyScalars,
  copyUnread,
  firstChoice,
  optionalArray,
  optionalBoolean,
  optionalNumber,
  optionalObject,
  optionalString,
  requiredObject,
  requiredString,
  setIfDefined,
  untranslatable,
  type FormatIds,
} from "./format-fields.js";

/** The Messages fields the translation reads; every other field passes to chat as sent. */
const READ_FIELDS = new Set([
  "model",
  "messages",
  "system",
  "max_tokens",
  "stop_sequences",
  "stream",
  "temperature",
  "top_p",
  "top_k",
  "tools",
  "tool_choice",
  "metadata",
  "thinking",
  "service_tier",
  "models",
  "provider",
  "session_id",
]);

export function messagesToChat(body: JsonObject): JsonObject {
  const maxTokens = body.max_tokens;
  if (maxTokens === undefined || maxTokens === null) throw gatewayError(400, "max_tokens is required");
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1)
    throw gatewayError(400, "max_tokens must be an integer of at least 1");
  const messages: JsonObject[] = [];
  const system = body.system;
  if (typeof system === "string") {
    if (system !== "") messages.push({ role: "system", content: system });
  } else if (system !== undefined && system !== null) {
    if (!Array.isArray(system)) throw gatewayError(400, "system must be a string or an array of text blocks");
    const blocks = system;
    messages.push({
      role: "system",
      content: blocks.map((block, index) => textPart(requiredObject(block, `system[${index}]`), `system[${index}]`)),
    });
  }
  const input = optionalArray(body.messages, "messages");
  if (!input || input.length === 0)
    throw gatewayError(400, input ? "messages must have at least 1 message" : "messages is required");
  input.forEach((message, index) =>
    messages.push(...chatMessages(requiredObject(message, `messages[${index}]`), `messages[${index}]`)),
  );

  const chat: JsonObject = { messages, max_tokens: maxTokens };
  copyScalars(body, chat, { strings: ["model"], numbers: ["temperature", "top_p", "top_k"], booleans: ["stream"] });
  const stop = optionalArray(body.stop_sequences, "stop_sequences");
  if (stop && stop.length > 0) chat.stop = stop.map((s, index) => requiredString(s, `stop_sequences[${index}]`));
  const tools = optionalArray(body.tools, "tools")?.map((tool, index) =>
    chatTool(requiredObject(tool, `tools[${index}]`), `tools[${index}]`),
  );
  if (tools && tools.length > 0) chat.tools = tools;
  const choice = optionalObject(body.tool_choice, "tool_choice");
  if (choice) Object.assign(chat, toolChoice(choice));
  const metadata = optionalObject(body.metadata, "metadata");
  setIfDefined(chat, "user", optionalString(metadata?.user_id, "metadata.user_id"));
  const { user_id: _userId, ...otherMetadata } = metadata ?? {};
  if (Object.keys(otherMetadata).length > 0) chat.metadata = otherMetadata;
  const tier = optionalString(body.service_tier, "service_tier");
  // Anthropic's "standard_only" is OpenAI's "default": no priority capacity.
  if (tier !== undefined) chat.service_tier = tier === "standard_only" ? "default" : tier;
  const thinking = optionalObject(body.thinking, "thinking");
  if (thinking?.type === "enabled") {
    const budget = optionalNumber(thinking.budget_tokens, "thinking.budget_tokens");
    chat.reasoning = budget === undefined ? { enabled: true } : { max_tokens: budget };
  } else if (thinking?.type === "disabled") {
    chat.reasoning = { enabled: false };
  } else if (thinking) {
    // A kind of thinking chat has no word for: the provider may know it.
    chat.thinking = thinking;
  }
  copyRoutingFields(body, chat);
  copyUnread(body, chat, READ_FIELDS);
  return chat;
}

function chatMessages(message: JsonObject, path: string): JsonObject[] {
  const role = requiredString(message.role, `${path}.role`);
  if (role !== "user" && role !== "assistant") throw gatewayError(400, `${path}.role must be user or assistant`);
  if (typeof message.content === "string") return [{ role, content: message.content }];
  const blocks = optionalArray(message.content, `${path}.content`);
  if (!blocks) throw gatewayError(400, `${path}.content is required`);
  const at = (index: number) => `${path}.content[${index}]`;
  return role === "user" ? userMessages(blocks, at) : [assistantMessage(blocks, at)];
}

/**
 * Tool results become chat `tool` messages, which must come right after the assistant's calls; the
 * rest of the turn follows as a user message.
 */
function userMessages(blocks: JsonValue[], at: (index: number) => string): JsonObject[] {
  const results: JsonObject[] = [];
  const parts: JsonObject[] = [];
  blocks.forEach((value, index) => {
    const block = requiredObject(value, at(index));
    if (block.type === "tool_result") {
      const content =
        typeof block.content === "string"
          ? block.content
          : (optionalArray(block.content, `${at(index)}.content`) ?? []).map((part, i) =>
              contentPart(part, `${at(index)}.content[${i}]`),
            );
      results.push({
        role: "tool",
        tool_call_id: requiredString(block.tool_use_id, `${at(index)}.tool_use_id`),
        content,
      });
    } else {
      parts.push(contentPart(block, at(index)));
    }
  });
  return parts.length > 0 ? [...results, { role: "user", content: parts }] : results;
}

function assistantMessage(blocks: JsonValue[], at: (index: number) => string): JsonObject {
  let text = "";
  const calls: JsonObject[] = [];
  blocks.forEach((value, index) => {
    const block = requiredObject(value, at(index));
    switch (block.type) {
      case "text":
        text += requiredString(block.text, `${at(index)}.text`);
        return;
      case "tool_use":
        calls.push({
          id: requiredString(block.id, `${at(index)}.id`),
          type: "function",
          function: {
            name: requiredString(block.name, `${at(index)}.name`),
            arguments: JSON.stringify(optionalObject(block.input, `${at(index)}.input`) ?? {}),
          },
        });
        return;
      case "thinking":
      case "redacted_thinking":
        return;
      default:
        throw untranslatable(
          `${at(index)}.type ${JSON.stringify(block.type)} is not supported ` +
            "in an assistant message by this endpoint; use text or tool_use",
        );
    }
  });
  const message: JsonObject = { role: "assistant" };
  if (text !== "" || calls.length === 0) message.content = text;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function contentPart(value: JsonValue, path: string): JsonObject {
  const block = requiredObject(value, path);
  switch (block.type) {
    case "text":
      return textPart(block, path);
    case "image":
      return {
        type: "image_url",
        image_url: { url: mediaUrl(requiredObject(block.source, `${path}.source`), `${path}.source`) },
      };
    case "document": {
      const source = requiredObject(block.source, `${path}.source`);
      if (source.type !== "base64")
        throw untranslatable(`${path}.source.type must be base64 for a document on this endpoint`);
      return { type: "file", file: { file_data: mediaUrl(source, `${path}.source`) } };
    }
    default:
      throw untranslatable(
        `${path}.type ${JSON.stringify(block.type)} is not supported by this endpoint; ` +
          "use text, image, document or tool_result",
      );
  }
}

function textPart(block: JsonObject, path: string): JsonObject {
  if (block.type !== "text") throw gatewayError(400, `${path}.type must be text`);
  const part: JsonObject = { type: "text", text: requiredString(block.text, `${path}.text`) };
  // Prompt caching hints travel on chat text parts too (providers/anthropic/chat-request.ts forwards them).
  if (isObject(block.cache_control)) part.cache_control = block.cache_control;
  return part;
}

/** Chat carries media as URLs: base64 sources become data: URLs, which the upstream side splits again. */
function mediaUrl(source: JsonObject, path: string): string {
  if (source.type === "base64")
    return dataUrl(
      requiredString(source.media_type, `${path}.media_type`),
      requiredString(source.data, `${path}.data`),
    );
  if (source.type === "url") return requiredString(source.url, `${path}.url`);
  throw untranslatable(`${path}.type must be base64 or url for this endpoint`);
}

function chatTool(tool: JsonObject, path: string): JsonObject {
  const type = optionalString(tool.type, `${path}.type`);
  // Anthropic's own server and client tools (web_search_…, bash_…) have no chat counterpart.
  if (type !== undefined && type !== "custom")
    throw untranslatable(
      `${path}.type ${JSON.stringify(type)} is not supported by this endpoint; ` +
        "only custom tools with an input_schema are",
    );
  const fn: JsonObject = {
    name: requiredString(tool.name, `${path}.name`),
    parameters: requiredObject(tool.input_schema, `${path}.input_schema`),
  };
  setIfDefined(fn, "description", optionalString(tool.description, `${path}.description`));
  return { type: "function", function: fn };
}

function toolChoice(choice: JsonObject): JsonObject {
  const out: JsonObject = {};
  const chatChoice = typeof choice.type === "string" ? chatToolChoice(choice.type) : undefined;
  if (chatChoice !== undefined) out.tool_choice = chatChoice;
  else if (choice.type === "tool")
    out.tool_choice = { type: "function", function: { name: requiredString(choice.name, "tool_choice.name") } };
  else throw gatewayError(400, "tool_choice.type must be auto, any, tool or none");
  if (optionalBoolean(choice.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use") === true)
    out.parallel_tool_calls = false;
  return out;
}

export function chatToMessage(completion: JsonObject, ids: FormatIds): JsonObject {
  const choice = firstChoice(completion);
  const chatMessage = isObject(choice.message) ? choice.message : {};
  const content: JsonObject[] = [];
  if (typeof chatMessage.content === "string" && chatMessage.content !== "")
    content.push({ type: "text", text: chatMessage.content });
  for (const call of Array.isArray(chatMessage.tool_calls) ? chatMessage.tool_calls : []) {
    if (!isObject(call)) continue;
    const fn = isObject(call.function) ? call.function : {};
    content.push({
      type: "tool_use",
      id: typeof call.id === "string" ? call.id : "",
      name: typeof fn.name === "string" ? fn.name : "",
      input: toolInput(fn.arguments),
    });
  }
  const message: JsonObject = {
    id: ids.id,
    type: "message",
    role: "assistant",
    model: typeof completion.model === "string" ? completion.model : "",
    content,
    stop_reason: stopReasonOf(choice) ?? "end_turn",
    stop_sequence: null,
    usage: messageUsage(completion.usage),
  };
  copyProviderFields(completion, message);
  return message;
}

/** Anthropic's tool input is an object; arguments that are not one cannot be expressed, and are a provider failure. */
function toolInput(args: JsonValue | undefined): JsonObject {
  if (typeof args !== "string" || args.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed))
    throw gatewayError(
      502,
      "The model's tool call arguments are not a JSON object, which the Messages format cannot carry",
    );
  return parsed;
}

/** Chat usage as Anthropic usage; the gateway's `cost` (USD) rides along as on chat. */
export function messageUsage(usage: JsonValue | undefined): JsonObject {
  const out = anthropicUsageJson(tokensOfChatUsage(usage));
  if (isObject(usage) && typeof usage.cost === "number") out.cost = usage.cost;
  return out;
}

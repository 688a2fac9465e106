import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../json-shape.js";
import { arrayOf, assistantToolCalls, functionTool, unsupported } from "../chat-request-parts.js";
import { baseModelId } from "./model-id.js";
import { copyProviderRequestFields } from "../provider-fields.js";

/**
 * An OpenAI chat request as a Bedrock Converse request (the model goes in the path, not the
 * body). Chat parameters Converse has no field for (n, seed, penalties, logprobs,
 * response_format, parallel_tool_calls, …) are not sent: whether an endpoint may serve a request
 * that uses them is routing's decision (supported_parameters). A field that is not chat's
 * (`guardrailConfig`, `additionalModelRequestFields`, `performanceConfig`, …) is sent as it came
 * (provider-fields.ts). Content Converse cannot carry throws "unsupported". README.md has the tables.
 */
export function converseRequest(request: JsonObject, modelId: string): JsonObject {
  const system: JsonObject[] = [];
  const messages: JsonObject[] = [];
  for (const message of arrayOf(request.messages)) {
    if (!isObject(message)) throw unsupported("a message is not an object");
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...systemBlocks(message.content));
        break;
      case "user":
        pushMerged(messages, "user", userBlocks(message.content));
        break;
      case "assistant":
        pushMerged(messages, "assistant", assistantBlocks(message));
        break;
      case "tool":
        pushMerged(messages, "user", [toolResult(message)]);
        break;
      default:
        throw unsupported(`message role ${JSON.stringify(message.role)} is not supported`);
    }
  }

  const out: JsonObject = { messages };
  if (system.length > 0) out.system = system;
  const inference = inferenceConfig(request);
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  const toolConfig = converseToolConfig(request);
  if (toolConfig) out.toolConfig = toolConfig;
  const additional = additionalFields(request, modelId);
  if (additional) out.additionalModelRequestFields = additional;
  copyProviderRequestFields(request, out);
  return out;
}

function inferenceConfig(request: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const value of [request.max_completion_tokens, request.max_tokens]) {
    if (typeof value === "number" && Number.isInteger(value) && value > 0) {
      out.maxTokens = value;
      break;
    }
  }
  // OpenAI's range is 0–2; the models behind Converse take 0–1.
  if (typeof request.temperature === "number") out.temperature = Math.min(Math.max(request.temperature, 0), 1);
  if (typeof request.top_p === "number") out.topP = request.top_p;
  const stop =
    typeof request.stop === "string" ? [request.stop] : arrayOf(request.stop).filter((s) => typeof s === "string");
  if (stop.length > 0) out.stopSequences = stop;
  return out;
}

/**
 * `top_k` has no Converse field; the model families that document it take it in
 * additionalModelRequestFields, each in its own shape. Elsewhere it is dropped.
 */
function additionalFields(request: JsonObject, modelId: string): JsonObject | undefined {
  if (typeof request.top_k !== "number") return undefined;
  const model = baseModelId(modelId);
  if (model.startsWith("anthropic.")) return { top_k: request.top_k };
  if (model.startsWith("amazon.nova")) return { inferenceConfig: { topK: request.top_k } };
  return undefined;
}

/**
 * Converse wants user and assistant turns to alternate: a message of the same role as the one
 * before joins it, which also gathers consecutive tool results (and the user text after them)
 * into one user turn.
 */
function pushMerged(messages: JsonObject[], role: "user" | "assistant", blocks: JsonObject[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role && Array.isArray(last.content)) {
    last.content.push(...blocks);
    return;
  }
  messages.push({ role, content: blocks });
}

function userBlocks(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === "string") return nonEmptyText(content);
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
  for (const { id, name, input } of assistantToolCalls(message))
    blocks.push({ toolUse: { toolUseId: id, name, input } });
  return blocks;
}

/** A tool's answer is passed on as the text it is; reading it as JSON would be a guess. */
function toolResult(message: JsonObject): JsonObject {
  if (typeof message.tool_call_id !== "string") throw unsupported("a tool message needs a tool_call_id");
  const content =
    typeof message.content === "string"
      ? [{ text: message.content }]
      : arrayOf(message.content).map((part) => {
          if (!isObject(part) || part.type !== "text" || typeof part.text !== "string")
            throw unsupported("tool results may only hold text for this provider");
          return { text: part.text };
        });
  return { toolResult: { toolUseId: message.tool_call_id, content } };
}

/** One OpenAI content part as Converse blocks; empty text yields none (Converse refuses blank text). */
function contentPart(part: JsonValue): JsonObject[] {
  if (!isObject(part)) throw unsupported("a content part is not an object");
  switch (part.type) {
    case "text": {
      if (typeof part.text !== "string") throw unsupported("a text part has no text");
      return withCachePoint(nonEmptyText(part.text), part);
    }
    case "image_url": {
      const url = isObject(part.image_url) ? part.image_url.url : part.image_url;
      if (typeof url !== "string") throw unsupported("an image_url part has no url");
      return [{ image: imageBlock(url) }];
    }
    default:
      throw unsupported(`content part type ${JSON.stringify(part.type)} is not supported by this provider`);
  }
}

const DATA_URL = /^data:image\/([a-z+.-]+)(?:;[^,]*)?;base64,(.*)$/is;
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  png: "png",
  jpeg: "jpeg",
  jpg: "jpeg",
  gif: "gif",
  webp: "webp",
};

/** Converse takes image bytes only (base64 in JSON), never a URL it would fetch. */
function imageBlock(url: string): JsonObject {
  const data = DATA_URL.exec(url);
  if (!data) {
    if (/^https?:\/\//i.test(url))
      throw unsupported("this provider takes images as base64 data: URLs only, not http(s) URLs");
    throw unsupported("an image must be a base64 data: URL");
  }
  const subtype = (data[1] ?? "").toLowerCase();
  const format = Object.hasOwn(IMAGE_FORMATS, subtype) ? IMAGE_FORMATS[subtype] : undefined;
  if (format === undefined)
    throw unsupported(`image type image/${subtype} is not supported by this provider (png, jpeg, gif, webp)`);
  return { format, source: { bytes: data[2] ?? "" } };
}

/** A chat `cache_control` mark is Converse's cache point: a block of its own after the marked one. */
function withCachePoint(blocks: JsonObject[], part: JsonObject): JsonObject[] {
  return blocks.length > 0 && isObject(part.cache_control) ? [...blocks, { cachePoint: { type: "default" } }] : blocks;
}

function systemBlocks(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === "string") return nonEmptyText(content);
  return arrayOf(content).flatMap((part) => {
    if (!isObject(part) || part.type !== "text") throw unsupported("system messages may only hold text");
    return contentPart(part);
  });
}

function nonEmptyText(text: string): JsonObject[] {
  return text === "" ? [] : [{ text }];
}

/** Tools and the choice among them; `tool_choice: "none"` sends no tools at all (Converse has no "none"). */
function converseToolConfig(request: JsonObject): JsonObject | undefined {
  const choice = request.tool_choice;
  const tools = arrayOf(request.tools).map(toolSpec);
  if (tools.length === 0 || choice === "none") return undefined;
  const out: JsonObject = { tools };
  if (choice === "auto") out.toolChoice = { auto: {} };
  else if (choice === "required") out.toolChoice = { any: {} };
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string")
    out.toolChoice = { tool: { name: choice.function.name } };
  else if (choice !== undefined && choice !== null)
    throw unsupported("tool_choice is not one of auto, none, required or a function");
  return out;
}

function toolSpec(tool: JsonValue): JsonObject {
  const { name, description, parameters } = functionTool(tool);
  const spec: JsonObject = { name, inputSchema: { json: parameters ?? { type: "object", properties: {} } } };
  if (description !== undefined) spec.description = description;
  return { toolSpec: spec };
}

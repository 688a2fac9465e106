import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { sourceOfMediaUrl } from "../media-source.js";
import { isObject } from "../json-shape.js";
import { arrayOf, assistantToolCalls, functionTool, unsupported } from "../chat-request-parts.js";
import { copyProviderRequestFields } from "../provider-fields.js";

/**
 * What Gemini accepts in place of a thought signature it issued, for a function call whose
 * signature did not travel back (a client that keeps only the chat fields, or a history begun on
 * another model). Gemini 3 refuses a replayed function call without one.
 */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/**
 * An OpenAI chat request as a Gemini GenerateContentRequest (README.md has the table). Chat
 * parameters Gemini has no counterpart for are not sent, as routing decides whether an endpoint
 * may serve them (supported_parameters); a field that is not chat's (`safetySettings`,
 * `cachedContent`, …) is sent as it came (provider-fields.ts); content it cannot carry throws
 * "unsupported".
 */
export function geminiRequest(request: JsonObject): JsonObject {
  const system: JsonObject[] = [];
  const contents: JsonObject[] = [];
  // Gemini answers a function by its name; chat by the id of the call, so remember which is which.
  const toolNames = new Map<string, string>();
  for (const message of arrayOf(request.messages)) {
    if (!isObject(message)) throw unsupported("a message is not an object");
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...systemParts(message.content));
        break;
      case "user":
        pushMerged(contents, "user", userParts(message.content));
        break;
      case "assistant":
        pushMerged(contents, "model", modelParts(message, toolNames));
        break;
      case "tool":
        pushMerged(contents, "user", [functionResponse(message, toolNames)]);
        break;
      default:
        throw unsupported(`message role ${JSON.stringify(message.role)} is not supported`);
    }
  }

  const out: JsonObject = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };
  const declarations = arrayOf(request.tools).map(functionDeclaration);
  if (declarations.length > 0) {
    out.tools = [{ functionDeclarations: declarations }];
    const config = functionCallingConfig(request.tool_choice);
    if (config) out.toolConfig = { functionCallingConfig: config };
  }
  const generationConfig = generationConfigOf(request);
  if (Object.keys(generationConfig).length > 0) out.generationConfig = generationConfig;
  copyProviderRequestFields(request, out);
  return out;
}

/** Gemini wants turns to alternate: a message of the role of the turn before joins that turn. */
function pushMerged(contents: JsonObject[], role: "user" | "model", parts: JsonObject[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last && last.role === role && Array.isArray(last.parts)) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function systemParts(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === "string") return textPart(content);
  return arrayOf(content).flatMap((part) => {
    if (!isObject(part) || part.type !== "text" || typeof part.text !== "string")
      throw unsupported("system messages may only hold text");
    return textPart(part.text);
  });
}

function userParts(content: JsonValue | undefined): JsonObject[] {
  if (typeof content === "string") return textPart(content);
  return arrayOf(content).flatMap(contentPart);
}

/**
 * An assistant message: its text, then its calls. Reasoning from an earlier answer is not sent
 * back: Gemini reads thoughts only with the signature that chat does not carry.
 */
function modelParts(message: JsonObject, toolNames: Map<string, string>): JsonObject[] {
  const parts: JsonObject[] =
    typeof message.content === "string"
      ? textPart(message.content)
      : arrayOf(message.content).flatMap((part) => {
          if (isObject(part) && part.type === "refusal" && typeof part.refusal === "string")
            return textPart(part.refusal);
          return contentPart(part);
        });
  let first = true;
  for (const { id, name, input, call } of assistantToolCalls(message)) {
    toolNames.set(id, name);
    const part: JsonObject = { functionCall: { name, args: input } };
    // Only the first call of a step carries a signature; the others of that step have none.
    const signature = thoughtSignatureOf(call);
    if (signature !== undefined) part.thoughtSignature = signature;
    else if (first) part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
    first = false;
    parts.push(part);
  }
  return parts;
}

/** Where the response codec puts a call's signature: Google's own OpenAI-compatible place for it. */
function thoughtSignatureOf(call: JsonObject): string | undefined {
  const google =
    isObject(call.extra_content) && isObject(call.extra_content.google) ? call.extra_content.google : undefined;
  return typeof google?.thought_signature === "string" ? google.thought_signature : undefined;
}

/**
 * A tool result. Gemini wants an object: a result that is a JSON object goes as it is, anything
 * else as `{output: <text>}`, the key Gemini reads as the function's output.
 */
function functionResponse(message: JsonObject, toolNames: Map<string, string>): JsonObject {
  if (typeof message.tool_call_id !== "string") throw unsupported("a tool message needs a tool_call_id");
  const name = toolNames.get(message.tool_call_id) ?? (typeof message.name === "string" ? message.name : undefined);
  if (name === undefined) throw unsupported("a tool message answers no tool call of an earlier assistant message");
  const text =
    typeof message.content === "string"
      ? message.content
      : arrayOf(message.content)
          .map((part) => {
            if (!isObject(part) || part.type !== "text" || typeof part.text !== "string")
              throw unsupported("tool results may only hold text for this provider");
            return part.text;
          })
          .join("");
  const parsed = parseJson(text);
  return { functionResponse: { name, response: isObject(parsed) ? parsed : { output: text } } };
}

/** One OpenAI content part as Gemini parts (empty text yields none: Gemini refuses it). */
function contentPart(part: JsonValue): JsonObject[] {
  if (!isObject(part)) throw unsupported("a content part is not an object");
  switch (part.type) {
    case "text":
      if (typeof part.text !== "string") throw unsupported("a text part has no text");
      return textPart(part.text);
    case "image_url": {
      const url = isObject(part.image_url) ? part.image_url.url : part.image_url;
      if (typeof url !== "string") throw unsupported("an image_url part has no url");
      return [mediaPart(url)];
    }
    case "input_audio": {
      const audio = isObject(part.input_audio) ? part.input_audio : {};
      if (typeof audio.data !== "string" || typeof audio.format !== "string")
        throw unsupported("an input_audio part needs data and a format");
      return [{ inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } }];
    }
    case "file": {
      const data = isObject(part.file) ? part.file.file_data : undefined;
      if (typeof data !== "string") throw unsupported("a file part needs file_data for this provider");
      return [mediaPart(data)];
    }
    default:
      throw unsupported(`content part type ${JSON.stringify(part.type)} is not supported by this provider`);
  }
}

/** A data: URL is sent inline; Gemini fetches an http(s) URL itself (as `fileData`). */
function mediaPart(url: string): JsonObject {
  const source = sourceOfMediaUrl(url);
  if (!source) throw unsupported("media must be an http(s) URL or a base64 data: URL");
  if (source.type === "base64") return { inlineData: { mimeType: source.media_type ?? "", data: source.data ?? "" } };
  const mimeType = mimeTypeOfUrl(url);
  return { fileData: mimeType ? { fileUri: url, mimeType } : { fileUri: url } };
}

const MIME_TYPE_OF_EXTENSION: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
};

/** Chat names no media type for a URL; the path's extension is the only hint (Gemini guesses without one). */
function mimeTypeOfUrl(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return extension !== undefined && Object.hasOwn(MIME_TYPE_OF_EXTENSION, extension)
    ? MIME_TYPE_OF_EXTENSION[extension]
    : undefined;
}

function textPart(text: string): JsonObject[] {
  return text === "" ? [] : [{ text }];
}

/** JSON Schema goes as `parametersJsonSchema`; `parameters` would take only Google's OpenAPI subset. */
function functionDeclaration(tool: JsonValue): JsonObject {
  const { name, description, parameters } = functionTool(tool);
  const out: JsonObject = { name };
  if (description !== undefined) out.description = description;
  if (parameters !== undefined) out.parametersJsonSchema = parameters;
  return out;
}

const MODE_OF_CHAT_CHOICE: Readonly<Record<string, string>> = { auto: "AUTO", none: "NONE", required: "ANY" };

function functionCallingConfig(choice: JsonValue | undefined): JsonObject | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === "string" && Object.hasOwn(MODE_OF_CHAT_CHOICE, choice))
    return { mode: MODE_OF_CHAT_CHOICE[choice] ?? "AUTO" };
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string")
    return { mode: "ANY", allowedFunctionNames: [choice.function.name] };
  throw unsupported("tool_choice is not one of auto, none, required or a function");
}

/** The sampling and output parameters, under their Gemini names. */
function generationConfigOf(request: JsonObject): JsonObject {
  const config: JsonObject = {};
  const copy = (from: string, to: string) => {
    const value = request[from];
    if (typeof value === "number") config[to] = value;
  };
  copy("temperature", "temperature");
  copy("top_p", "topP");
  copy("top_k", "topK");
  copy("seed", "seed");
  copy("presence_penalty", "presencePenalty");
  copy("frequency_penalty", "frequencyPenalty");
  copy("n", "candidateCount");
  for (const value of [request.max_completion_tokens, request.max_tokens]) {
    if (typeof value === "number" && Number.isInteger(value) && value > 0) {
      config.maxOutputTokens = value;
      break;
    }
  }
  const stop =
    typeof request.stop === "string" ? [request.stop] : arrayOf(request.stop).filter((s) => typeof s === "string");
  if (stop.length > 0) config.stopSequences = stop;
  Object.assign(config, responseFormat(request.response_format));
  const thinking = thinkingConfig(request);
  if (thinking) config.thinkingConfig = thinking;
  return config;
}

/**
 * JSON mode; a json_schema's schema as `responseJsonSchema` (JSON Schema, where `responseSchema`
 * takes the OpenAPI subset).
 */
function responseFormat(format: JsonValue | undefined): JsonObject {
  if (!isObject(format) || format.type === "text") return {};
  if (format.type === "json_object") return { responseMimeType: "application/json" };
  if (format.type === "json_schema") {
    const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
    return isObject(schema)
      ? { responseMimeType: "application/json", responseJsonSchema: schema }
      : { responseMimeType: "application/json" };
  }
  throw unsupported(`response_format type ${JSON.stringify(format.type)} is not supported by this provider`);
}

/**
 * Asking for reasoning (`reasoning`, or `reasoning_effort`) asks Gemini for its thought summaries,
 * unless `reasoning.exclude`. A token budget (`reasoning.max_tokens`) is Gemini's `thinkingBudget`.
 * An effort level is not sent: Gemini 3 takes levels and Gemini 2.5 budgets, and which one a
 * model is cannot be told from the request.
 */
function thinkingConfig(request: JsonObject): JsonObject | undefined {
  const reasoning = isObject(request.reasoning) ? request.reasoning : undefined;
  if (!reasoning && request.reasoning_effort === undefined) return undefined;
  const config: JsonObject = {};
  if (reasoning?.exclude !== true) config.includeThoughts = true;
  if (typeof reasoning?.max_tokens === "number" && Number.isInteger(reasoning.max_tokens) && reasoning.max_tokens >= 0)
    config.thinkingBudget = reasoning.max_tokens;
  return Object.keys(config).length > 0 ? config : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

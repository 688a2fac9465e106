/**
 * The OpenAI Responses API as the chat completions format, both ways, for providers that do not
 * speak it (those that do get the body as sent: docs/providers.md has both tables). Every field
 * with a chat counterpart is mapped; every field the translation does not read reaches chat as
 * sent (`service_tier`, `prompt_cache_key`, `safety_identifier`, `store`, `metadata`, a vendor's
 * own). What only the Responses API's own state gives meaning to is not sent: `include`,
 * `truncation`, `max_tool_calls`, `reasoning.summary`, `stream_options`. What needs that state or
 * a built-in tool (`previous_response_id`, `conversation`, `prompt`, `background`, item
 * references, file ids, tools other than functions) is untranslatable: a 400 naming it when no
 * endpoint that speaks Responses serves the call. Reasoning items a client echoes back are dropped:
 * chat has no place for them and providers do not need them.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { gatewayError } from "../../../../wire/errors.js";
import { isObject } from "../../providers/json-shape.js";
import {
  copyRoutingFields,
  copyProviderFields,
  copyScalars,
  copyUnread,
  countAt,
  firstChoice,
  optionalArray,
  optionalNumber,
  optionalObject,
  optionalString,
  requiredObject,
  requiredString,
  setIfDefined,
  untranslatable,
  type FormatIds,
} from "./format-fields.js";

/** The Responses fields the translation reads; every other field passes to chat as sent. */
const READ_FIELDS = new Set([
  "model",
  "input",
  "instructions",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "user",
  "parallel_tool_calls",
  "max_output_tokens",
  "tools",
  "tool_choice",
  "text",
  "reasoning",
  "top_logprobs",
  "include",
  "truncation",
  "max_tool_calls",
  "previous_response_id",
  "conversation",
  "prompt",
  "background",
  "models",
  "provider",
  "session_id",
]);

/** Fields that only a stored response, conversation or prompt gives meaning to. */
const STATEFUL_FIELDS = ["previous_response_id", "conversation", "prompt"];

export function responsesToChat(body: JsonObject): JsonObject {
  for (const name of STATEFUL_FIELDS) {
    if (body[name] !== undefined && body[name] !== null)
      throw untranslatable(
        `${name} is not supported by this endpoint: the gateway stores no responses; ` +
          "send the whole conversation in input",
      );
  }
  if (body.background === true)
    throw untranslatable("background is not supported by this endpoint: it answers while the call waits");
  const messages: JsonObject[] = [];
  const instructions = optionalString(body.instructions, "instructions");
  if (instructions) messages.push({ role: "system", content: instructions });
  const input = body.input;
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
  } else if (Array.isArray(input)) {
    if (input.length === 0) throw gatewayError(400, "input must have at least 1 item");
    input.forEach((item, index) => addInputItem(messages, item, `input[${index}]`));
  } else if (input === undefined || input === null) {
    // The Responses API itself may take its input from a stored prompt or conversation.
    throw untranslatable("input is required");
  } else {
    throw gatewayError(400, "input must be a string or an array of input items");
  }

  const chat: JsonObject = { messages };
  copyScalars(body, chat, {
    strings: ["model", "user"],
    numbers: ["temperature", "top_p"],
    booleans: ["stream", "parallel_tool_calls"],
  });
  setIfDefined(chat, "max_completion_tokens", optionalNumber(body.max_output_tokens, "max_output_tokens"));
  const tools = optionalArray(body.tools, "tools")?.map((tool, index) => chatTool(tool, `tools[${index}]`));
  if (tools && tools.length > 0) chat.tools = tools;
  setIfDefined(chat, "tool_choice", chatToolChoice(body.tool_choice));
  const text = optionalObject(body.text, "text");
  setIfDefined(chat, "response_format", responseFormat(text));
  setIfDefined(chat, "verbosity", optionalString(text?.verbosity, "text.verbosity"));
  const { format: _format, verbosity: _verbosity, ...otherText } = text ?? {};
  if (Object.keys(otherText).length > 0) chat.text = otherText;
  const reasoning = optionalObject(body.reasoning, "reasoning");
  // Chat's own name for it; `reasoning.max_tokens` and the like are OpenRouter's chat `reasoning`.
  setIfDefined(chat, "reasoning_effort", optionalString(reasoning?.effort, "reasoning.effort"));
  const { effort: _effort, summary: _summary, generate_summary: _generate, ...otherReasoning } = reasoning ?? {};
  if (Object.keys(otherReasoning).length > 0) chat.reasoning = otherReasoning;
  const topLogprobs = optionalNumber(body.top_logprobs, "top_logprobs");
  if (topLogprobs !== undefined) Object.assign(chat, { logprobs: true, top_logprobs: topLogprobs });
  copyRoutingFields(body, chat);
  copyUnread(body, chat, READ_FIELDS);
  return chat;
}

function addInputItem(messages: JsonObject[], value: JsonValue, path: string): void {
  const item = requiredObject(value, path);
  const type = optionalString(item.type, `${path}.type`) ?? "message";
  switch (type) {
    case "message":
      messages.push(chatMessage(item, path));
      return;
    case "function_call": {
      const call = {
        id: requiredString(item.call_id, `${path}.call_id`),
        type: "function",
        function: {
          name: requiredString(item.name, `${path}.name`),
          arguments: optionalString(item.arguments, `${path}.arguments`) ?? "",
        },
      };
      // Consecutive calls (and the text before them) are one assistant turn in chat.
      const last = messages[messages.length - 1];
      if (last?.role === "assistant")
        last.tool_calls = [...(Array.isArray(last.tool_calls) ? last.tool_calls : []), call];
      else messages.push({ role: "assistant", tool_calls: [call] });
      return;
    }
    case "function_call_output": {
      const output = item.output;
      const content =
        typeof output === "string"
          ? output
          : contentParts(optionalArray(output, `${path}.output`) ?? [], `${path}.output`);
      messages.push({ role: "tool", tool_call_id: requiredString(item.call_id, `${path}.call_id`), content });
      return;
    }
    case "reasoning":
      return;
    default:
      throw untranslatable(
        `${path}.type ${JSON.stringify(type)} is not supported by this endpoint; ` +
          "use message, function_call or function_call_output",
      );
  }
}

const ROLES = new Set(["user", "assistant", "system", "developer"]);

function chatMessage(item: JsonObject, path: string): JsonObject {
  const role = requiredString(item.role, `${path}.role`);
  if (!ROLES.has(role)) throw gatewayError(400, `${path}.role must be one of: user, assistant, system, developer`);
  const content = item.content;
  if (typeof content === "string") return { role, content };
  const parts = optionalArray(content, `${path}.content`);
  if (parts === undefined) throw gatewayError(400, `${path}.content is required`);
  return { role, content: contentParts(parts, `${path}.content`) };
}

function contentParts(parts: JsonValue[], path: string): JsonObject[] {
  return parts.map((value, index): JsonObject => {
    const partPath = `${path}[${index}]`;
    const part = requiredObject(value, partPath);
    const type = requiredString(part.type, `${partPath}.type`);
    switch (type) {
      // Assistant turns echoed back carry output_text.
      case "input_text":
      case "output_text":
        return { type: "text", text: requiredString(part.text, `${partPath}.text`) };
      case "refusal":
        return { type: "refusal", refusal: requiredString(part.refusal, `${partPath}.refusal`) };
      case "input_image": {
        if (part.file_id !== undefined && part.file_id !== null)
          throw untranslatable(
            `${partPath}.file_id is not supported by this endpoint; send image_url (an http(s) or data: URL)`,
          );
        const image: JsonObject = { url: requiredString(part.image_url, `${partPath}.image_url`) };
        setIfDefined(image, "detail", optionalString(part.detail, `${partPath}.detail`));
        return { type: "image_url", image_url: image };
      }
      case "input_file": {
        if (part.file_id !== undefined && part.file_id !== null)
          throw untranslatable(`${partPath}.file_id is not supported by this endpoint; send file_data`);
        const file: JsonObject = { file_data: requiredString(part.file_data, `${partPath}.file_data`) };
        setIfDefined(file, "filename", optionalString(part.filename, `${partPath}.filename`));
        return { type: "file", file };
      }
      default:
        throw untranslatable(
          `${partPath}.type ${JSON.stringify(type)} is not supported by this endpoint; ` +
            "use input_text, input_image or input_file",
        );
    }
  });
}

function chatTool(value: JsonValue, path: string): JsonObject {
  const tool = requiredObject(value, path);
  const type = requiredString(tool.type, `${path}.type`);
  // The gateway's own server tools are named the same in every format.
  if (type.startsWith("svc:")) return { type };
  if (type !== "function")
    throw untranslatable(`${path}.type must be function or a server tool (svc:…) for this endpoint, got ${type}`);
  const fn: JsonObject = { name: requiredString(tool.name, `${path}.name`) };
  setIfDefined(fn, "description", optionalString(tool.description, `${path}.description`));
  setIfDefined(fn, "parameters", optionalObject(tool.parameters, `${path}.parameters`));
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

function chatToolChoice(choice: JsonValue | undefined): JsonValue | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (isObject(choice) && choice.type === "function")
    return { type: "function", function: { name: requiredString(choice.name, "tool_choice.name") } };
  if (isObject(choice) && choice.type === "allowed_tools") {
    const tools = (optionalArray(choice.tools, "tool_choice.tools") ?? []).map((tool, index) => {
      const named = requiredObject(tool, `tool_choice.tools[${index}]`);
      if (named.type !== "function")
        throw untranslatable(`tool_choice.tools[${index}].type must be function for this endpoint`);
      return { type: "function", function: { name: requiredString(named.name, `tool_choice.tools[${index}].name`) } };
    });
    return {
      type: "allowed_tools",
      allowed_tools: { mode: optionalString(choice.mode, "tool_choice.mode") ?? "auto", tools },
    };
  }
  if (isObject(choice) && typeof choice.type === "string")
    throw untranslatable(`tool_choice.type ${JSON.stringify(choice.type)} is not supported by this endpoint`);
  throw gatewayError(400, 'tool_choice must be "auto", "none", "required" or {"type": "function", "name": …}');
}

function responseFormat(text: JsonObject | undefined): JsonValue | undefined {
  const format = optionalObject(text?.format, "text.format");
  if (!format) return undefined;
  const type = requiredString(format.type, "text.format.type");
  if (type === "text") return undefined;
  if (type === "json_object") return { type };
  if (type !== "json_schema") throw gatewayError(400, "text.format.type must be text, json_object or json_schema");
  const schema: JsonObject = {
    name: requiredString(format.name, "text.format.name"),
    schema: requiredObject(format.schema, "text.format.schema"),
  };
  setIfDefined(schema, "description", optionalString(format.description, "text.format.description"));
  if (typeof format.strict === "boolean") schema.strict = format.strict;
  return { type, json_schema: schema };
}

/** Chat finish reasons that leave a response `incomplete`, with the Responses API's reason. */
const INCOMPLETE: Record<string, string> = { length: "max_output_tokens", content_filter: "content_filter" };

export function incompleteReason(finishReason: JsonValue | undefined): string | undefined {
  return typeof finishReason === "string" ? INCOMPLETE[finishReason] : undefined;
}

export function chatToResponse(completion: JsonObject, ids: FormatIds): JsonObject {
  const choice = firstChoice(completion);
  const message = isObject(choice.message) ? choice.message : {};
  const incomplete = incompleteReason(choice.finish_reason);
  const output: JsonObject[] = [];
  const content: JsonObject[] = [];
  if (typeof message.content === "string" && message.content !== "") content.push(outputText(message.content));
  if (typeof message.refusal === "string" && message.refusal !== "")
    content.push({ type: "refusal", refusal: message.refusal });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  // An answer with neither text nor calls is still one (empty) message, as the Responses API gives.
  if (content.length > 0 || calls.length === 0) {
    if (content.length === 0) content.push(outputText(""));
    output.push({ ...messageItem(ids.id, incomplete ? "incomplete" : "completed"), content });
  }
  calls.forEach((call, index) => {
    const fn = isObject(call.function) ? call.function : {};
    output.push(
      functionCallItem(
        ids.id,
        index,
        typeof call.id === "string" ? call.id : "",
        typeof fn.name === "string" ? fn.name : "",
        typeof fn.arguments === "string" ? fn.arguments : "",
        "completed",
      ),
    );
  });
  const response = responseObject(ids, stringField(completion.model), incomplete, output, completion.usage);
  copyProviderFields(completion, response);
  return response;
}

export function outputText(text: string): JsonObject {
  return { type: "output_text", text, annotations: [] };
}

export function messageItem(responseId: string, status: string): JsonObject {
  return { id: `msg_${responseId}`, type: "message", status, role: "assistant", content: [] };
}

export function functionCallItem(
  responseId: string,
  index: number,
  callId: string,
  name: string,
  args: string,
  status: string,
): JsonObject {
  return { id: `fc_${responseId}_${index}`, type: "function_call", status, call_id: callId, name, arguments: args };
}

/**
 * The `response` object. `status` is `completed`, or `incomplete` with its reason; `in_progress`
 * (no usage yet) opens a stream. `output_text` is an SDK convenience, not part of the wire format.
 */
export function responseObject(
  ids: FormatIds,
  model: string,
  incomplete: string | undefined,
  output: JsonObject[],
  usage: JsonValue | undefined,
  inProgress = false,
): JsonObject {
  return {
    id: ids.id,
    object: "response",
    created_at: ids.createdAt,
    status: inProgress ? "in_progress" : incomplete ? "incomplete" : "completed",
    error: null,
    incomplete_details: !inProgress && incomplete ? { reason: incomplete } : null,
    model,
    output,
    usage: inProgress || usage === undefined || usage === null ? null : responseUsage(usage),
  };
}

/** Chat usage as Responses usage; the gateway's `cost` (USD) rides along as on chat. */
function responseUsage(usage: JsonValue): JsonObject {
  const input = countAt(usage, "prompt_tokens");
  const output = countAt(usage, "completion_tokens");
  const out: JsonObject = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: countAt(usage, "prompt_tokens_details", "cached_tokens") },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: countAt(usage, "completion_tokens_details", "reasoning_tokens") },
    total_tokens: input + output,
  };
  if (isObject(usage) && typeof usage.cost === "number") out.cost = usage.cost;
  return out;
}

function stringField(value: JsonValue | undefined): string {
  return typeof value === "string" ? value : "";
}

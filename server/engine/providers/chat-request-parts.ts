/**
 * What every codec from the OpenAI chat request to another wire format (anthropic/, google/,
 * bedrock/) reads the same way: tools, an assistant's tool calls and their arguments. Each codec
 * then writes them in its provider's shape; what a provider cannot take fails as "unsupported",
 * which the caller sees as a 400 naming the provider.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "./json-shape.js";
import { UpstreamError } from "./provider.js";

/** A function tool as the OpenAI format declares it. */
export interface FunctionTool {
  name: string;
  description: string | undefined;
  /** Its JSON Schema; undefined when the tool declared none. */
  parameters: JsonObject | undefined;
}

/** A tool call of an assistant message, with its arguments as a JSON object. */
export interface AssistantToolCall {
  id: string;
  name: string;
  input: JsonObject;
  /** The call as sent (providers' own fields ride on it, such as Gemini's thought signature). */
  call: JsonObject;
}

export function functionTool(tool: JsonValue): FunctionTool {
  if (
    !isObject(tool) ||
    tool.type !== "function" ||
    !isObject(tool.function) ||
    typeof tool.function.name !== "string"
  ) {
    throw unsupported("only function tools are supported by this provider");
  }
  const fn = tool.function;
  return {
    name: tool.function.name,
    description: typeof fn.description === "string" ? fn.description : undefined,
    parameters: isObject(fn.parameters) ? fn.parameters : undefined,
  };
}

export function assistantToolCalls(message: JsonObject): AssistantToolCall[] {
  return arrayOf(message.tool_calls).map((call) => {
    if (
      !isObject(call) ||
      !isObject(call.function) ||
      typeof call.id !== "string" ||
      typeof call.function.name !== "string"
    ) {
      throw unsupported("an assistant tool call needs an id and a function name");
    }
    return { id: call.id, name: call.function.name, input: toolCallInput(call.function.arguments), call };
  });
}

/** The arguments (a JSON string in the OpenAI format) as the object the other formats want; none is `{}`. */
function toolCallInput(args: JsonValue | undefined): JsonObject {
  if (args === undefined || args === null || (typeof args === "string" && args.trim() === "")) return {};
  if (isObject(args)) return args;
  let parsed: unknown;
  try {
    parsed = typeof args === "string" ? JSON.parse(args) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed)) throw unsupported("tool call arguments must be a JSON object for this provider");
  return parsed;
}

export function arrayOf(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

export function unsupported(message: string): UpstreamError {
  return new UpstreamError("unsupported", message);
}

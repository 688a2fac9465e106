import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../providers/json-shape.js";

/**
 * A chat answer's two forms, for the cache, which stores only the non-streamed one: the completion
 * a stream's chunks make (text and reasoning joined, tool calls merged by index, the finish
 * reason, the provider's other fields), and the chunks a cached completion is replayed as (per
 * choice, its message as one delta, then its finish; the usage chunk last).
 */
export class CompletionAssembler {
  private readonly choices = new Map<number, { message: JsonObject; finish: JsonValue; logprobs: JsonValue[] }>();
  private first: JsonObject | undefined;

  add(chunk: JsonObject): void {
    this.first ??= chunk;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isObject(choice)) continue;
      const index = typeof choice.index === "number" ? choice.index : 0;
      let assembled = this.choices.get(index);
      if (!assembled)
        this.choices.set(index, (assembled = { message: { role: "assistant" }, finish: null, logprobs: [] }));
      if (isObject(choice.delta)) mergeDelta(assembled.message, choice.delta);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) assembled.finish = choice.finish_reason;
      if (isObject(choice.logprobs) && Array.isArray(choice.logprobs.content))
        assembled.logprobs.push(...choice.logprobs.content);
    }
  }

  /** The completion, with the stream's final `usage`. */
  completion(usage: JsonValue): JsonObject {
    const { choices: _choices, usage: _usage, ...fields } = this.first ?? {};
    return {
      ...fields,
      object: "chat.completion",
      choices: [...this.choices.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, { message, finish, logprobs }]) => ({
          index,
          message,
          logprobs: logprobs.length > 0 ? { content: logprobs } : null,
          finish_reason: finish,
        })),
      usage,
    };
  }
}

/** The chunks of a completion replayed as a stream: the caller sets ids and the rest as for live chunks. */
export function replayChunks(completion: JsonObject): JsonObject[] {
  const { choices, usage, object: _object, ...fields } = completion;
  const chunk = (parts: JsonObject): JsonObject => ({ ...fields, object: "chat.completion.chunk", ...parts });
  const chunks: JsonObject[] = [];
  for (const choice of Array.isArray(choices) ? choices : []) {
    if (!isObject(choice)) continue;
    const message = isObject(choice.message) ? choice.message : {};
    const toolCalls = Array.isArray(message.tool_calls)
      ? message.tool_calls.map((call, index) => (isObject(call) ? { index, ...call } : call))
      : undefined;
    const delta: JsonObject = { ...message, ...(toolCalls ? { tool_calls: toolCalls } : {}) };
    chunks.push(
      chunk({ choices: [{ index: choice.index ?? 0, delta, logprobs: choice.logprobs ?? null, finish_reason: null }] }),
    );
    chunks.push(
      chunk({
        choices: [
          { index: choice.index ?? 0, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? "stop" },
        ],
      }),
    );
  }
  chunks.push(chunk({ choices: [], usage: usage ?? null }));
  return chunks;
}

/** Strings are joined, tool calls merged by their index, other lists appended, anything else replaced. */
function mergeDelta(message: JsonObject, delta: JsonObject): void {
  for (const [field, value] of Object.entries(delta)) {
    if (value === null || value === undefined) continue;
    const held = message[field];
    if (typeof value === "string" && field !== "role") message[field] = typeof held === "string" ? held + value : value;
    else if (field === "tool_calls" && Array.isArray(value))
      message.tool_calls = mergeToolCalls(Array.isArray(held) ? held : [], value);
    else if (Array.isArray(value)) message[field] = [...(Array.isArray(held) ? held : []), ...value];
    else message[field] = value;
  }
}

function mergeToolCalls(held: JsonValue[], deltas: JsonValue[]): JsonValue[] {
  const calls = held.filter(isObject);
  for (const delta of deltas) {
    if (!isObject(delta)) continue;
    const { index, ...rest } = delta;
    const position = typeof index === "number" ? index : calls.length;
    const call = (calls[position] ??= {});
    for (const [field, value] of Object.entries(rest)) {
      if (field === "function" && isObject(value)) {
        const fn = isObject(call.function) ? call.function : (call.function = {});
        for (const [part, text] of Object.entries(value))
          fn[part] = typeof text === "string" && typeof fn[part] === "string" ? fn[part] + text : text;
      } else if (value !== null && value !== undefined) call[field] = value;
    }
  }
  return calls;
}

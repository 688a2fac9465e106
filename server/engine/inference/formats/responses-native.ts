/**
 * Responses answers an endpoint gave natively (server/engine/inference/native-route.ts). The
 * gateway sets `model` to the catalog's id, as on every answer, and adds the call's `cost` to the
 * usage; the response keeps the provider's `id` (and its items theirs), since that is what
 * `previous_response_id` names at the provider that stored it. A stream ends at
 * `response.completed`, `response.incomplete` or `response.failed`, each with the whole response.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../../providers/json-shape.js";
import type { NativeAnswers, NativeAssembler } from "../native-route.js";

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

export const RESPONSES_NATIVE: NativeAnswers = {
  isNative: (answer) => answer.object === "response",
  rewrite(answer, ids) {
    answer.model = ids.model;
  },
  rewriteEvent(event, ids) {
    if (isObject(event.response)) event.response.model = ids.model;
  },
  isTerminal: (event) => typeof event.type === "string" && TERMINAL.has(event.type),
  carriesUsage: (event) => typeof event.type === "string" && TERMINAL.has(event.type),
  usageOf(answerOrEvent) {
    const response = answerOrEvent.object === "response" ? answerOrEvent : answerOrEvent.response;
    return isObject(response) && isObject(response.usage) ? response.usage : undefined;
  },
  text: (answer) => outputText(answer.output),
  eventText: (event) =>
    event.type === "response.output_text.delta" && typeof event.delta === "string" ? event.delta : "",
  assembler: () => new ResponseAssembler(),
  replay: replayResponse,
};

/** The terminal event carries the whole response: nothing to assemble. */
class ResponseAssembler implements NativeAssembler {
  private response: JsonObject | undefined;

  add(event: JsonObject): void {
    if (RESPONSES_NATIVE.isTerminal(event) && isObject(event.response)) this.response = event.response;
  }

  answer(): JsonObject | undefined {
    return this.response;
  }
}

function outputText(output: JsonValue | undefined): string {
  let text = "";
  for (const item of Array.isArray(output) ? output : []) {
    if (!isObject(item) || !Array.isArray(item.content)) continue;
    for (const part of item.content)
      if (isObject(part) && part.type === "output_text" && typeof part.text === "string") text += part.text;
  }
  return text;
}

/**
 * A stored response as the events of its stream: created and in progress, each output item added,
 * its text or arguments in one delta, done, then the terminal event with the response.
 */
function replayResponse(answer: JsonObject): JsonObject[] {
  const events: JsonObject[] = [];
  const event = (type: string, fields: JsonObject) => events.push({ type, sequence_number: events.length, ...fields });
  const opening = { ...answer, status: "in_progress", output: [], usage: null };
  event("response.created", { response: opening });
  event("response.in_progress", { response: opening });
  const output = Array.isArray(answer.output) ? answer.output : [];
  output.forEach((value, outputIndex) => {
    if (!isObject(value)) return;
    const itemId = typeof value.id === "string" ? value.id : "";
    if (value.type === "message") {
      event("response.output_item.added", {
        output_index: outputIndex,
        item: { ...value, status: "in_progress", content: [] },
      });
      const parts = Array.isArray(value.content) ? value.content : [];
      parts.forEach((part, contentIndex) => {
        if (!isObject(part)) return;
        const address = { item_id: itemId, output_index: outputIndex, content_index: contentIndex };
        const text = part.type === "output_text" && typeof part.text === "string" ? part.text : undefined;
        event("response.content_part.added", { ...address, part: text === undefined ? part : { ...part, text: "" } });
        if (text !== undefined) {
          event("response.output_text.delta", { ...address, delta: text, logprobs: [] });
          event("response.output_text.done", { ...address, text, logprobs: [] });
        }
        event("response.content_part.done", { ...address, part });
      });
    } else if (value.type === "function_call") {
      const args = typeof value.arguments === "string" ? value.arguments : "";
      event("response.output_item.added", {
        output_index: outputIndex,
        item: { ...value, status: "in_progress", arguments: "" },
      });
      event("response.function_call_arguments.delta", { item_id: itemId, output_index: outputIndex, delta: args });
      event("response.function_call_arguments.done", {
        item_id: itemId,
        output_index: outputIndex,
        name: value.name ?? "",
        arguments: args,
      });
    } else {
      event("response.output_item.added", { output_index: outputIndex, item: value });
    }
    event("response.output_item.done", { output_index: outputIndex, item: value });
  });
  const status = answer.status === "incomplete" || answer.status === "failed" ? answer.status : "completed";
  event(`response.${status}`, { response: answer });
  return events;
}

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../../providers/json-shape.js";
import { copyProviderFields, firstChoice, type FormatIds, type StreamIds } from "./format-fields.js";
import { functionCallItem, incompleteReason, messageItem, outputText, responseObject } from "./responses-format.js";

/**
 * A chat completion chunk stream as OpenAI Responses stream events, each with `type` and
 * `sequence_number`. Nothing is produced before the first chunk: a call refused or failed before
 * it has begun must still be able to answer with an HTTP error status rather than a broken stream.
 * Items stay open until the chat stream ends (text may follow a tool call), and are then closed in
 * output order; the last event is `response.completed` or `response.incomplete` with the whole
 * response, usage included.
 */
export async function* chatStreamToResponseEvents(
  chunks: AsyncIterable<JsonObject>,
  ids: StreamIds,
): AsyncGenerator<JsonObject> {
  let stream: ResponseStream | undefined;
  for await (const chunk of chunks) {
    if (!stream) {
      stream = new ResponseStream(
        { id: ids.id ?? (typeof chunk.id === "string" ? chunk.id : ""), createdAt: ids.createdAt },
        typeof chunk.model === "string" ? chunk.model : "",
      );
      yield* stream.start();
    }
    yield* stream.chunk(chunk);
  }
  stream ??= new ResponseStream({ id: ids.id ?? "", createdAt: ids.createdAt }, "");
  if (!stream.started) yield* stream.start();
  yield* stream.finish();
}

interface OpenText {
  outputIndex: number;
  item: JsonObject;
  text: string;
}

interface OpenCall {
  outputIndex: number;
  item: JsonObject & { arguments: string };
}

class ResponseStream {
  started = false;
  private sequence = 0;
  private readonly output: JsonObject[] = [];
  private text: OpenText | undefined;
  /** By the chat tool call `index`. */
  private readonly calls = new Map<number, OpenCall>();
  private finishReason: JsonValue | undefined;
  private usage: JsonValue | undefined;
  /** The provider's own fields of the chunks, for the whole response at the end. */
  private readonly providerFields: JsonObject = {};

  constructor(
    private readonly ids: FormatIds,
    private readonly model: string,
  ) {}

  start(): JsonObject[] {
    this.started = true;
    const response = responseObject(this.ids, this.model, undefined, [], undefined, true);
    return [this.event("response.created", { response }), this.event("response.in_progress", { response })];
  }

  chunk(chunk: JsonObject): JsonObject[] {
    const events: JsonObject[] = [];
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    copyProviderFields(chunk, this.providerFields);
    const choice = firstChoice(chunk);
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === "string" && delta.content !== "") events.push(...this.textDelta(delta.content));
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : [])
      if (isObject(call)) events.push(...this.callDelta(call));
    if (typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason;
    return events;
  }

  finish(): JsonObject[] {
    const incomplete = incompleteReason(this.finishReason);
    const events: JsonObject[] = [];
    const open = [...(this.text ? [this.text] : []), ...this.calls.values()].sort(
      (a, b) => a.outputIndex - b.outputIndex,
    );
    for (const item of open)
      events.push(
        ...("text" in item ? this.closeText(item, incomplete ? "incomplete" : "completed") : this.closeCall(item)),
      );
    const response = responseObject(this.ids, this.model, incomplete, this.output, this.usage);
    copyProviderFields(this.providerFields, response);
    events.push(this.event(incomplete ? "response.incomplete" : "response.completed", { response }));
    return events;
  }

  private textDelta(delta: string): JsonObject[] {
    const events: JsonObject[] = [];
    if (!this.text) {
      const item = messageItem(this.ids.id, "in_progress");
      this.text = { outputIndex: this.add(item), item, text: "" };
      // Cloned: the item keeps changing until its `done` event, which an earlier event must not show.
      events.push(
        this.event("response.output_item.added", { output_index: this.text.outputIndex, item: structuredClone(item) }),
      );
      events.push(this.event("response.content_part.added", { ...this.partAddress(this.text), part: outputText("") }));
    }
    this.text.text += delta;
    events.push(this.event("response.output_text.delta", { ...this.partAddress(this.text), delta, logprobs: [] }));
    return events;
  }

  private closeText(open: OpenText, status: string): JsonObject[] {
    const part = outputText(open.text);
    open.item.status = status;
    open.item.content = [part];
    return [
      this.event("response.output_text.done", { ...this.partAddress(open), text: open.text, logprobs: [] }),
      this.event("response.content_part.done", { ...this.partAddress(open), part }),
      this.event("response.output_item.done", { output_index: open.outputIndex, item: open.item }),
    ];
  }

  private callDelta(delta: JsonObject): JsonObject[] {
    const events: JsonObject[] = [];
    const index = typeof delta.index === "number" ? delta.index : 0;
    const fn = isObject(delta.function) ? delta.function : {};
    let open = this.calls.get(index);
    if (!open) {
      const item = functionCallItem(this.ids.id, this.calls.size, "", "", "", "in_progress") as OpenCall["item"];
      open = { outputIndex: this.add(item), item };
      this.calls.set(index, open);
      if (typeof delta.id === "string") item.call_id = delta.id;
      if (typeof fn.name === "string") item.name = fn.name;
      events.push(
        this.event("response.output_item.added", { output_index: open.outputIndex, item: structuredClone(item) }),
      );
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "") {
      open.item.arguments += fn.arguments;
      events.push(
        this.event("response.function_call_arguments.delta", {
          item_id: open.item.id ?? "",
          output_index: open.outputIndex,
          delta: fn.arguments,
        }),
      );
    }
    return events;
  }

  private closeCall(open: OpenCall): JsonObject[] {
    open.item.status = "completed";
    return [
      this.event("response.function_call_arguments.done", {
        item_id: open.item.id ?? "",
        output_index: open.outputIndex,
        name: open.item.name ?? "",
        arguments: open.item.arguments,
      }),
      this.event("response.output_item.done", { output_index: open.outputIndex, item: open.item }),
    ];
  }

  private add(item: JsonObject): number {
    this.output.push(item);
    return this.output.length - 1;
  }

  private partAddress(open: OpenText): JsonObject {
    return { item_id: open.item.id ?? "", output_index: open.outputIndex, content_index: 0 };
  }

  private event(type: string, fields: JsonObject): JsonObject {
    return { type, sequence_number: this.sequence++, ...fields };
  }
}

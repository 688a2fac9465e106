import { plan, sendEvents, splitWords, type Exchange } from "./mock-plan.js";
import { sendJson, type Json } from "./mock-wire.js";

/**
 * OpenAI's Responses API in the mock (`POST …/responses`, OpenAI's and Azure's v1 paths): the same
 * reply plan as chat, rendered as a `response` object, or streamed as its events
 * (response.created, response.in_progress, output_item.added, content_part.added, one
 * output_text.delta per word, the done events, response.completed). Prompt tokens count the text
 * of `instructions` and `input`; `max_output_tokens` below the word count ends the response
 * `incomplete`. A rule's `answerFields` ride on the response object, in its events too.
 */
export function mockResponses(x: Exchange): void {
  const response = mockResponse(x);
  if (x.body.stream !== true) return sendJson(x.res, 200, response);
  const events: string[] = [];
  const event = (type: string, fields: Json) =>
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: events.length, ...fields })}\n\n`);
  const opening = { ...response, status: "in_progress", output: [], usage: null, incomplete_details: null };
  event("response.created", { response: opening });
  event("response.in_progress", { response: opening });
  const output = response.output as Json[];
  output.forEach((item, outputIndex) => {
    const itemId = String(item.id);
    if (item.type === "message") {
      const address = { item_id: itemId, output_index: outputIndex, content_index: 0 };
      const part = (item.content as Json[])[0]!;
      event("response.output_item.added", {
        output_index: outputIndex,
        item: { ...item, status: "in_progress", content: [] },
      });
      event("response.content_part.added", { ...address, part: { ...part, text: "" } });
      for (const word of splitWords(String(part.text)))
        event("response.output_text.delta", { ...address, delta: word, logprobs: [] });
      event("response.output_text.done", { ...address, text: part.text, logprobs: [] });
      event("response.content_part.done", { ...address, part });
    } else {
      const args = String(item.arguments);
      const half = Math.ceil(args.length / 2);
      event("response.output_item.added", {
        output_index: outputIndex,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of [args.slice(0, half), args.slice(half)])
        if (delta !== "")
          event("response.function_call_arguments.delta", { item_id: itemId, output_index: outputIndex, delta });
      event("response.function_call_arguments.done", {
        item_id: itemId,
        output_index: outputIndex,
        name: item.name,
        arguments: args,
      });
    }
    event("response.output_item.done", { output_index: outputIndex, item });
  });
  event(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  sendEvents(
    x,
    events,
    (type, message) =>
      `event: error\ndata: ` +
      `${JSON.stringify({ type: "error", code: type, message, param: null, sequence_number: events.length })}\n\n`,
  );
}

/** The non-streamed `response`. */
function mockResponse(x: Exchange): Json {
  const { body, model, rule } = x;
  const p = plan(body, rule, model, body.max_output_tokens, responsesChars(body));
  const output: Json[] = [];
  if (p.words.length > 0 || !p.toolCall) {
    output.push({
      id: `msg_mock_${x.id}`,
      type: "message",
      status: p.finish === "length" ? "incomplete" : "completed",
      role: "assistant",
      content: [{ type: "output_text", text: p.words.join(""), annotations: [] }],
    });
  }
  if (p.toolCall)
    output.push({
      id: `fc_mock_${x.id}`,
      type: "function_call",
      status: "completed",
      call_id: `call_mock_${x.id}`,
      name: p.toolCall.name,
      arguments: p.toolCall.arguments,
    });
  const incomplete = p.finish === "length";
  return {
    id: `resp_mock_${x.id}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: incomplete ? "incomplete" : "completed",
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    model,
    output,
    usage: {
      input_tokens: p.promptTokens,
      input_tokens_details: { cached_tokens: p.cacheReadTokens },
      output_tokens: p.completionTokens,
      output_tokens_details: { reasoning_tokens: rule?.usage ? 0 : p.reasoningWords.length },
      total_tokens: p.promptTokens + p.completionTokens,
    },
    ...rule?.answerFields,
  };
}

/** Characters of `instructions` and of the text in `input` (a string, or items with text parts or outputs). */
function responsesChars(body: Json): number {
  let chars = typeof body.instructions === "string" ? body.instructions.length : 0;
  const input = body.input;
  if (typeof input === "string") return chars + input.length;
  for (const item of Array.isArray(input) ? input : []) {
    if (typeof item !== "object" || item === null) continue;
    const { content, output } = item as Json;
    if (typeof content === "string") chars += content.length;
    if (typeof output === "string") chars += output.length;
    for (const part of Array.isArray(content) ? content : []) {
      const text = typeof part === "object" && part !== null ? (part as Json).text : undefined;
      if (typeof text === "string") chars += text.length;
    }
  }
  return chars;
}

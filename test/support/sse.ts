import * as assert from "uvu/assert";
import type { Reply } from "./http.js";

/**
 * The one SSE parser of the tests. A `text/event-stream` body is blocks separated by a blank line;
 * a block's `event:` line names it, its `data:` lines (joined by "\n") carry the payload, and a
 * block of comments only (`: keepalive`) is counted, not returned. `data` is the payload parsed
 * as JSON, or its text as is when it is not JSON (`[DONE]`).
 */
export interface SseEvent {
  event: string | undefined;
  data: unknown;
}

export interface SseBlocks {
  events: SseEvent[];
  /** Comment-only blocks (keepalives). */
  comments: number;
  /** What follows the last complete block: the start of a block still arriving. */
  rest: string;
}

/** Splits the complete blocks off a stream's text so far (readers of a live stream keep `rest`). */
export function takeSseBlocks(text: string): SseBlocks {
  const blocks = text.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? "";
  const events: SseEvent[] = [];
  let comments = 0;
  for (const block of blocks) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    }
    if (data.length === 0) {
      if (block.startsWith(":")) comments += 1;
      continue;
    }
    events.push({ event, data: parsePayload(data.join("\n")) });
  }
  return { events, comments, rest };
}

/** Every event of a whole stream body, in order. */
export function sseEvents(text: string): SseEvent[] {
  return takeSseBlocks(`${text}\n\n`).events;
}

/** The payloads of a whole stream body, in order. */
export function sseData(text: string): unknown[] {
  return sseEvents(text).map((e) => e.data);
}

/**
 * The events of a named-event stream answer (Anthropic Messages, OpenAI Responses), after
 * checking its framing: an event stream, every event named after its `type`, no `[DONE]`.
 */
export function typedStreamEvents(res: Reply): Array<Record<string, unknown>> {
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.not.ok(res.text.includes("[DONE]"), "no [DONE] in a named-event stream");
  return sseEvents(res.text).map((e) => {
    const data = e.data as Record<string, unknown>;
    assert.is(e.event, data.type, "the SSE event name is the event's type");
    return data;
  });
}

export const typesOf = (events: Array<Record<string, unknown>>): unknown[] => events.map((e) => e.type);

function parsePayload(payload: string): unknown {
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return payload;
  }
}

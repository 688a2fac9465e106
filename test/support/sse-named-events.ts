import * as assert from "uvu/assert";
import type { Reply } from "./http.js";
/**
 * The events of a raw `text/event-stream` body with their `event:` names, in order, for streams
 * framed the Anthropic / OpenAI Responses way (named events, no `[DONE]`). `data` is parsed JSON,
 * or the text as is when it is not JSON. Comments (`: keepalive`) are skipped.
 */
export interface NamedSseEvent {
  event: string | undefined;
  data: unknown;
}

export function namedSseEvents(text: string): NamedSseEvent[] {
  const events: NamedSseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    }
    if (data.length === 0) continue;
    const payload = data.join("\n");
    try {
      events.push({ event, data: JSON.parse(payload) as unknown });
    } catch {
      events.push({ event, data: payload });
    }
  }
  return events;
}

/**
 * The events of a named-event stream answer, after checking its framing: an event stream, every
 * event named after its `type`, no `[DONE]`. Returns the parsed event bodies in order.
 */
export function typedStreamEvents(res: Reply): Array<Record<string, unknown>> {
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.not.ok(res.text.includes("[DONE]"), "no [DONE] in a named-event stream");
  const events = namedSseEvents(res.text).map((e) => {
    const data = e.data as Record<string, unknown>;
    assert.is(e.event, data.type, "the SSE event name is the event's type");
    return data;
  });
  return events;
}

export const typesOf = (events: Array<Record<string, unknown>>): unknown[] => events.map((e) => e.type);

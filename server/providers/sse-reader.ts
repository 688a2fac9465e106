/**
 * Incremental Server-Sent Events parsing (the WHATWG event-stream format as providers send it):
 * `data:` lines of one event are joined with "\n", `event:` names it, a blank line dispatches it,
 * `:` comments (keep-alives) are skipped. Bytes may be split anywhere, also inside a UTF-8
 * sequence. An event still open when the body ends is dropped, as the format says: a stream
 * cut in the middle of an event must not look like a complete one.
 */
export interface SseEvent {
  /** The `event:` field, undefined when the event had none (OpenAI never names events). */
  event: string | undefined;
  data: string;
}

export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new TextDecoder();
  let pending = "";
  let event: string | undefined;
  let data: string | undefined;
  for await (const bytes of body) {
    pending += decoder.decode(bytes, { stream: true });
    let start = 0;
    for (let end = pending.indexOf("\n", start); end !== -1; end = pending.indexOf("\n", start)) {
      const line = pending.charCodeAt(end - 1) === 13 && end > start ? pending.slice(start, end - 1) : pending.slice(start, end);
      start = end + 1;
      if (line === "") {
        if (data !== undefined) yield { event, data };
        event = undefined;
        data = undefined;
        continue;
      }
      if (line.charCodeAt(0) === 58 /* ":" */) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") data = data === undefined ? value : `${data}\n${value}`;
      else if (field === "event") event = value;
    }
    pending = start === 0 ? pending : pending.slice(start);
  }
}

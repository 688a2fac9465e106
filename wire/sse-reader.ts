import { LineSplitter } from "./line-splitter.js";

/**
 * Incremental Server-Sent Events parsing (the WHATWG event-stream format as providers send it):
 * `data:` lines of one event are joined with "\n", `event:` names it, a blank line dispatches it,
 * `:` comments (keep-alives) are skipped. Bytes may be split anywhere, also inside a UTF-8
 * sequence. An event still open when the body ends is dropped, as the format says: a stream
 * cut in the middle of an event must not look like a complete one.
 *
 * A line or an event past its limit fails with the reader's `tooLong` error and nothing more is
 * read: the stream's iterator is closed, which destroys a response body. The gateway makes it an
 * invalid provider answer (`readUpstreamSse` in server/engine/providers/upstream-http.ts); the
 * intern host, which reads the gateway's own streams, keeps the plain error.
 */
export interface SseEvent {
  /** The `event:` field, undefined when the event had none (OpenAI never names events). */
  event: string | undefined;
  data: string;
}

/**
 * The longest line of an event stream. One line is one streamed chunk: a few tokens with their
 * metadata, at most a whole generated image or audio clip in base64, a few MB. Reaching 16 MiB
 * means a line that never ends, which would otherwise be held in memory whole.
 */
export const MAX_SSE_LINE_BYTES = 16 * 1024 * 1024;

/**
 * The most characters the `data:` lines of one event may add up to, "data:" and line breaks
 * included (so an event of endless empty `data:` lines is bounded too). Providers send one data
 * line per event; the limit is the line's, for an event spread over many lines.
 */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

const MIB = 1024 * 1024;

export async function* readSse(
  body: AsyncIterable<Uint8Array>,
  tooLong: (message: string) => Error = (message) => new Error(message),
): AsyncGenerator<SseEvent, void, undefined> {
  const lines = new LineSplitter(MAX_SSE_LINE_BYTES, () =>
    tooLong(`an upstream stream line is longer than ${MAX_SSE_LINE_BYTES / MIB} MiB`),
  );
  let event: string | undefined;
  const data: string[] = [];
  let eventChars = 0;
  for await (const bytes of body) {
    for (const text of lines.push(bytes)) {
      const line = text.charCodeAt(text.length - 1) === 13 ? text.slice(0, -1) : text;
      if (line === "") {
        if (data.length > 0) yield { event, data: data.length === 1 ? data[0]! : data.join("\n") };
        event = undefined;
        data.length = 0;
        eventChars = 0;
        continue;
      }
      if (line.charCodeAt(0) === 58 /* ":" */) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") {
        eventChars += line.length + 1;
        if (eventChars > MAX_SSE_EVENT_CHARS)
          throw tooLong(`an upstream stream event is longer than ${MAX_SSE_EVENT_CHARS / MIB} Mi characters`);
        data.push(value);
      } else if (field === "event") event = value;
    }
  }
}

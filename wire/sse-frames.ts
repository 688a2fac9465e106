import type { JsonValue } from "@bufbuild/protobuf";

/**
 * The framing of a `text/event-stream` answer, one place for both sides: the facade frames the
 * messages of a server stream with it, and the core the events of the JSON-native inference
 * routes, which reach the facade as ready-made frames.
 *
 * A named event (`event: <name>`) is how the Anthropic Messages and OpenAI Responses streams are
 * framed; their SDKs dispatch on the name and know the end from the last event, so they get no
 * `[DONE]`. A name with a line break would end the field early and forge another one, so such a
 * name is left out.
 */
export function sseFrame(json: string, name?: string): string {
  return name === undefined || /[\r\n]/.test(name) ? `data: ${json}\n\n` : `event: ${name}\ndata: ${json}\n\n`;
}

/** The end of an OpenAI-style stream. */
export const SSE_DONE = "data: [DONE]\n\n";

/** Sent after a quiet spell, so that proxies and clients keep the connection. */
export const SSE_KEEPALIVE = ": keepalive\n\n";

export const SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8";

/**
 * What a stream's items are to {@link jsonEventFrames}, and what carries its frames. A carrier is
 * made once per kind of stream, not per event: the loop runs on the inference hot path.
 */
export interface SseCarrier<T, C> {
  /** The JSON event an item stands for. */
  event(item: T): JsonValue;
  /**
   * What carries one frame; `first` is the stream's first chunk (the inference JSON methods give
   * it the content type).
   */
  chunk(frame: string, first: boolean): C;
  /**
   * An item that is the whole answer rather than an event (an unstreamed call's reply) becomes
   * the stream's one chunk, and nothing follows it; `undefined` for an event.
   */
  whole?(item: T): C | undefined;
}

/**
 * The frames of a stream of JSON events: one event per item (named after its `type` with
 * `namedEvents`), then `[DONE]` unless the events are named.
 */
export async function* jsonEventFrames<T, C>(
  items: AsyncIterable<T>,
  namedEvents: boolean,
  carrier: SseCarrier<T, C>,
): AsyncGenerator<C> {
  let first = true;
  for await (const item of items) {
    const whole = carrier.whole?.(item);
    if (whole !== undefined) {
      yield whole;
      return;
    }
    const event = carrier.event(item);
    yield carrier.chunk(sseFrame(JSON.stringify(event), namedEvents ? typeOf(event) : undefined), first);
    first = false;
  }
  if (!namedEvents) yield carrier.chunk(SSE_DONE, first);
}

/** JSON values as the text of their frames: the facade writes the frames themselves. */
export const TEXT_FRAMES: SseCarrier<JsonValue, string> = {
  event: (item) => item,
  chunk: (frame) => frame,
};

function typeOf(event: JsonValue): string | undefined {
  return typeof event === "object" && event !== null && !Array.isArray(event) && typeof event.type === "string"
    ? event.type
    : undefined;
}

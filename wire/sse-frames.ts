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

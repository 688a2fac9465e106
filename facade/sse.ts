import type { ServerResponse } from "node:http";
import type { JsonValue } from "@bufbuild/protobuf";
import type { ErrorDialect } from "../gen/gateway/v1/options_pb.js";
import { errorBody, toHttpError } from "./error-response.js";

/**
 * Writes a server stream as `text/event-stream`: one `data: <json>` event per message, a
 * `: keepalive` comment after `keepaliveMs` without output, and `data: [DONE]` after the last
 * message. A stream that fails midway ends with an error event and no `[DONE]`, so a client can
 * never mistake it for a complete answer.
 *
 * With `namedEvents` (methods marked `(gateway.v1.sse_named_events)`) each event also carries
 * `event: <the message's "type">`, a failure is `event: error`, and there is no `[DONE]`: the
 * framing of the Anthropic Messages and OpenAI Responses streams, whose SDKs dispatch on the event
 * name and know the end from the last event's type.
 */
export interface SseOptions {
  keepaliveMs: number;
  namedEvents: boolean;
  /** The error `type` names of a failure event (error-response.ts). */
  errorDialect?: ErrorDialect;
}

export async function writeSse(res: ServerResponse, headers: Record<string, string>, events: AsyncIterable<JsonValue>, { keepaliveMs, namedEvents, errorDialect }: SseOptions): Promise<void> {
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      res.write(": keepalive\n\n");
      arm();
    }, keepaliveMs);
  };
  arm();
  try {
    for await (const event of events) {
      res.write(`${namedEvents ? eventLine(typeOf(event)) : ""}data: ${JSON.stringify(event)}\n\n`);
      arm();
    }
    if (!namedEvents) res.write("data: [DONE]\n\n");
  } catch (err) {
    if (!res.destroyed) res.write(`${namedEvents ? eventLine("error") : ""}data: ${errorBody(toHttpError(err), errorDialect)}\n\n`);
  } finally {
    clearTimeout(timer);
    res.end();
  }
}

function typeOf(event: JsonValue): string | undefined {
  return typeof event === "object" && event !== null && !Array.isArray(event) && typeof event.type === "string" ? event.type : undefined;
}

/** A type with a line break would end the field early and forge another one; such a value is left out. */
function eventLine(type: string | undefined): string {
  return type === undefined || /[\r\n]/.test(type) ? "" : `event: ${type}\n`;
}

import type { ServerResponse } from "node:http";
import type { JsonValue } from "@bufbuild/protobuf";
import { errorBody, toHttpError } from "./error-response.js";

/**
 * Writes a server stream as `text/event-stream`: one `data: <json>` event per message, a
 * `: keepalive` comment after `keepaliveMs` without output, and `data: [DONE]` after the last
 * message. A stream that fails midway ends with an error event and no `[DONE]`, so a client can
 * never mistake it for a complete answer.
 */
export async function writeSse(
  res: ServerResponse,
  headers: Record<string, string>,
  events: AsyncIterable<JsonValue>,
  keepaliveMs: number,
): Promise<void> {
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
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      arm();
    }
    res.write("data: [DONE]\n\n");
  } catch (err) {
    if (!res.destroyed) res.write(`data: ${errorBody(toHttpError(err))}\n\n`);
  } finally {
    clearTimeout(timer);
    res.end();
  }
}

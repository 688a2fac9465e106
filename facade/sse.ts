import type { ServerResponse } from "node:http";
import type { ErrorDialect } from "../gen/gateway/v1/options_pb.js";
import { SSE_CONTENT_TYPE, sseFrame } from "../wire/sse-frames.js";
import { errorBody, toHttpError } from "./error-response.js";
import type { KeepaliveTicker } from "./keepalive-ticker.js";
import { writeRespectingDrain } from "./response-write.js";

/**
 * Writes an answer as `text/event-stream` (framing: wire/sse-frames.ts): the frames in order, each
 * only once the client has read what came before (response-write.ts), and a `: keepalive` comment
 * when it has been silent for the ticker's interval (keepalive-ticker.ts). A stream that fails midway ends with
 * an error event and no `[DONE]`, so a client can never mistake it for a complete answer.
 *
 * With `namedEvents` (methods marked `(gateway.v1.sse_named_events)`) a failure is `event: error`:
 * the framing of the Anthropic Messages and OpenAI Responses streams.
 */
export interface SseOptions {
  keepalive: KeepaliveTicker;
  namedEvents: boolean;
  /** The error `type` names of a failure event (error-response.ts). */
  errorDialect?: ErrorDialect;
}

export async function writeSse(
  res: ServerResponse,
  headers: Record<string, string>,
  frames: AsyncIterable<string | Uint8Array>,
  { keepalive, namedEvents, errorDialect }: SseOptions,
): Promise<void> {
  res.writeHead(200, {
    ...headers,
    "content-type": SSE_CONTENT_TYPE,
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  const entry = keepalive.add(res);
  try {
    for await (const frame of frames) {
      await writeRespectingDrain(res, frame);
      entry.lastWriteAt = performance.now();
    }
  } catch (err) {
    if (!res.destroyed)
      res.write(sseFrame(errorBody(toHttpError(err), errorDialect), namedEvents ? "error" : undefined));
  } finally {
    keepalive.remove(entry);
    res.end();
  }
}

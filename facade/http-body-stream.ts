import type { ServerResponse } from "node:http";
import type { HttpBody } from "../gen/google/api/httpbody_pb.js";
import { writeRespectingDrain } from "./response-write.js";

/**
 * A server stream of `google.api.HttpBody` is one raw response body, as grpc-gateway renders it:
 * the content type of the first message, then the bytes of every message in order, written only as
 * fast as the client reads them (response-write.ts). A stream that fails midway is cut off (the
 * caller destroys the response), so a client never takes a partial body for a whole one. A body that is one message
 * goes out with its length.
 *
 * A `text/event-stream` body is made of ready frames (wire/sse-frames.ts) and is relayed as an event
 * stream instead (sse.ts: keepalives, and an error event when it fails midway).
 */
export async function writeHttpBodyStream(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  first: HttpBody,
  rest: AsyncIterator<HttpBody>,
): Promise<void> {
  const contentType = first.contentType || "application/octet-stream";
  const second = await rest.next();
  if (second.done) {
    res.writeHead(status, { ...headers, "content-type": contentType, "content-length": first.data.length });
    res.end(first.data);
    return;
  }
  res.writeHead(status, { ...headers, "content-type": contentType });
  await writeRespectingDrain(res, first.data);
  for (let next: IteratorResult<HttpBody> = second; !next.done; next = await rest.next())
    await writeRespectingDrain(res, next.value.data);
  res.end();
}

export function isEventStream(body: HttpBody): boolean {
  return body.contentType.startsWith("text/event-stream");
}

export async function* httpBodyFrames(first: HttpBody, rest: AsyncIterator<HttpBody>): AsyncGenerator<Uint8Array> {
  for (let next: IteratorResult<HttpBody> = { done: false, value: first }; !next.done; next = await rest.next())
    yield next.value.data;
}

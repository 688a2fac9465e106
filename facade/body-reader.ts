import type { IncomingMessage } from "node:http";
import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../wire/errors.js";

/**
 * Reads a request body up to `limit` bytes. A declared Content-Length over the limit is refused
 * before anything is read, and a body that grows past it stops being collected at that point
 * (413). The request is never destroyed here: the connection is closed in stages after the
 * answer (unread-body.ts), so that the client sees the 413.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else finish(tooLarge(limit));
    };
    const onEnd = () => finish(undefined);
    const onGone = () => finish(new Error("the client closed the connection before the body was read"));
    function finish(error: unknown): void {
      req.off("data", onData).off("end", onEnd).off("error", onGone).off("close", onGone);
      req.pause();
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    }
    req.on("data", onData).once("end", onEnd).once("error", onGone).once("close", onGone);
  });
}

/** The 413 of every body the facade reads or streams; `subject` names what was too large. */
export function tooLarge(limit: number, subject = "Request body"): ConnectError {
  return gatewayError(413, `${subject} exceeds the limit of ${limit} bytes for this endpoint`, {
    reason: "payload_too_large",
    retryable: false,
  });
}

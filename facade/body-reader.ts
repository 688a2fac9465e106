import type { IncomingMessage } from "node:http";
import { gatewayError } from "../server/core/errors.js";

/**
 * Reads a request body up to `limit` bytes. A declared Content-Length over the limit is refused
 * before anything is read, and a body that grows past it stops being read at that point (413).
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(limit: number) {
  return gatewayError(413, `Request body exceeds the limit of ${limit} bytes for this endpoint`, { reason: "payload_too_large", retryable: false });
}

export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return {};
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw gatewayError(400, `Malformed JSON body: ${err instanceof Error ? err.message : String(err)}`);
  }
}

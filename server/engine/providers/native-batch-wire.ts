/**
 * What both native batch implementations share: request bodies built from many items, result lines.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { Readable } from "node:stream";
import { isObject } from "./json-shape.js";
import { UpstreamError, type UpstreamUsage } from "./provider.js";

/**
 * `head + parts.join(separator) + tail` as a stream with its byte length, so a batch of many
 * items is uploaded without a second whole copy in memory, and with a content-length (some
 * providers refuse chunked uploads).
 */
export function joinedBody(
  head: string,
  parts: readonly string[],
  separator: string,
  tail: string,
): { data: Readable; length: number } {
  let length =
    Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, parts.length - 1) * Buffer.byteLength(separator);
  for (const part of parts) length += Buffer.byteLength(part);
  function* pieces(): Generator<Buffer> {
    yield Buffer.from(head);
    for (let i = 0; i < parts.length; i++) yield Buffer.from(i === 0 ? (parts[i] ?? "") : separator + (parts[i] ?? ""));
    yield Buffer.from(tail);
  }
  return { data: Readable.from(pieces(), { objectMode: false }), length };
}

/** One line of a provider's result file; anything but a JSON object is the provider breaking its format. */
export function parseResultLine(line: string): JsonObject {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    json = undefined;
  }
  if (!isObject(json) || typeof json.custom_id !== "string") {
    throw new UpstreamError("protocol", "a line of the upstream batch results is not a result object");
  }
  return json;
}

/**
 * Token counts for a success the provider reported none for. Both providers always report
 * usage on batch results; an item without any is billed its flat request price only.
 */
export const NO_TOKENS: UpstreamUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0 };

/**
 * Cleanup is idempotent: a batch or file the provider no longer knows is already gone, which is
 * what a retried DELETE after a partial failure finds.
 */
export async function unlessNotFound<T>(work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UpstreamError && err.failure === "status" && err.options.status === 404) return undefined;
    throw err;
  }
}

/** Provider ids go into URL paths; an id we did not expect must not change the path. */
export function pathSegment(id: string): string {
  return encodeURIComponent(id);
}

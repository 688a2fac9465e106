/**
 * What both blob stores share: the key rule and a byte-counting view of a body.
 *
 * @module
 */
import { Readable } from "node:stream";

/** Slash-separated segments of word characters, dots and hyphens, none starting with a dot. */
const KEY = /^[\w-][\w.-]*(\/[\w-][\w.-]*)*$/;

/** Keys are the gateway's own; one that could leave the store's root is a programming error. */
export function requireBlobKey(key: string): string {
  if (!KEY.test(key) || key.length > 1024) throw new Error(`invalid blob key: ${JSON.stringify(key.slice(0, 100))}`);
  return key;
}

/** The body as a byte stream (pulled only as the consumer reads), and how many bytes it gave. */
export function countedStream(body: AsyncIterable<Uint8Array>): { stream: Readable; size(): number } {
  let size = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      size += chunk.length;
      yield chunk;
    }
  }
  return { stream: Readable.from(counted(), { objectMode: false }), size: () => size };
}

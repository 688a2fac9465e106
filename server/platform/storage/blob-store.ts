import type { Readable } from "node:stream";

/**
 * Where the gateway keeps bytes it owns (uploaded files, stored video outputs): one interface,
 * a local directory by default and an S3-compatible bucket by configuration. Keys are relative
 * paths chosen by the gateway (`files/<workspace>/<id>`), never by a client.
 */
export interface BlobStore {
  /**
   * Streams `body` into `key` without holding it whole in memory. The object becomes visible
   * only when the body has ended; when the body errors or the call is aborted, nothing is left
   * behind under `key`. Resolves with the number of bytes stored.
   */
  put(
    key: string,
    body: AsyncIterable<Uint8Array>,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<{ size: number }>;
  /** The object's bytes as a stream, or undefined when there is no such object. */
  get(key: string): Promise<Readable | undefined>;
  /** Removes the object; no error when it does not exist. */
  delete(key: string): Promise<void>;
}

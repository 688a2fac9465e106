import type { StorageConfig } from "../config.js";
import type { BlobStore } from "./blob-store.js";
import { createLocalBlobStore } from "./local-blob-store.js";
import { createS3BlobStore } from "./s3-blob-store.js";

/** The configured store behind `deps.blobs`. */
export function createBlobStore(storage: StorageConfig): BlobStore {
  return storage.kind === "s3" ? createS3BlobStore(storage) : createLocalBlobStore(storage.dir);
}

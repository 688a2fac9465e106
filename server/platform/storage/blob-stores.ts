import type { StorageConfig } from "../config-storage.js";
import type { Logger } from "../logger.js";
import type { BlobStore } from "./blob-store.js";
import { createLocalBlobStore, narrowModes } from "./local-blob-store.js";
import { createS3BlobStore } from "./s3-blob-store.js";
import { errorMessage } from "../../../wire/errors.js";

/** The configured store behind `deps.blobs`; a local one's older files are narrowed in the background. */
export function createBlobStore(storage: StorageConfig, log: Logger): BlobStore {
  if (storage.kind === "s3") return createS3BlobStore(storage);
  void narrowModes(storage.dir, log).catch((err: unknown) =>
    log.error({ root: storage.dir, err: errorMessage(err) }, "the modes of stored files could not be narrowed"),
  );
  return createLocalBlobStore(storage.dir);
}

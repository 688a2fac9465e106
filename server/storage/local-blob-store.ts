import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { BlobStore } from "./blob-store.js";
import { countedStream, requireBlobKey } from "./blob-keys.js";

/**
 * Blobs as files under one directory. A put writes `<root>/.incoming/<random>` and renames it to
 * its key once the body has ended and is flushed to disk; a rename within one file system is
 * atomic, so readers never see a partial object and a failed or aborted put leaves nothing under
 * its key (its temporary file is removed).
 */
const INCOMING = ".incoming";
/** Temporary files this old are what a crashed process left behind. */
const STALE_INCOMING_MS = 24 * 60 * 60 * 1000;

export function createLocalBlobStore(root: string): BlobStore {
  const incoming = path.join(root, INCOMING);
  void removeStaleIncoming(incoming);

  return {
    async put(key, body, options = {}) {
      const target = path.join(root, requireBlobKey(key));
      await fsp.mkdir(incoming, { recursive: true });
      const temp = path.join(incoming, randomBytes(12).toString("hex"));
      const counted = countedStream(body);
      try {
        // The write stream pulls from the body only as fast as the disk takes it.
        await pipeline(counted.stream, fs.createWriteStream(temp, { flags: "wx", flush: true }), options.signal ? { signal: options.signal } : {});
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await fsp.rename(temp, target);
      } catch (err) {
        await fsp.rm(temp, { force: true });
        throw err;
      }
      return { size: counted.size() };
    },

    async get(key) {
      let handle: fsp.FileHandle;
      try {
        handle = await fsp.open(path.join(root, requireBlobKey(key)), "r");
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
      return handle.createReadStream() as Readable;
    },

    async delete(key) {
      await fsp.rm(path.join(root, requireBlobKey(key)), { force: true });
    },
  };
}

async function removeStaleIncoming(dir: string): Promise<void> {
  try {
    for (const name of await fsp.readdir(dir)) {
      const file = path.join(dir, name);
      const { mtimeMs } = await fsp.stat(file);
      if (Date.now() - mtimeMs > STALE_INCOMING_MS) await fsp.rm(file, { force: true });
    }
  } catch {
    // Nothing there yet, or a file another instance removed first: nothing to clean.
  }
}

function isMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && "code" in err && (err.code === "ENOENT" || err.code === "ENOTDIR");
}

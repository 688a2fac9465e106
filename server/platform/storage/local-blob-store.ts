/**
 * Blobs as files under one directory. A put writes `<root>/.incoming/<random>` and renames it to
 * its key once the body has ended and is flushed to disk; a rename within one file system is
 * atomic, so readers never see a partial object and a failed or aborted put leaves nothing under
 * its key (its temporary file is removed).
 *
 * The blobs are tenants' uploads and videos: every file is the gateway user's alone (0600), every
 * directory too (0700), whatever the process's umask, so no other OS user (an intern's shell)
 * reads them. A tree written before that (0644 and 0755) is narrowed by `narrowModes`.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Logger } from "../logger.js";
import type { BlobStore } from "./blob-store.js";
import { countedStream, requireBlobKey } from "./blob-keys.js";

const INCOMING = ".incoming";
/** Temporary files this old are what a crashed process left behind. */
const STALE_INCOMING_MS = 24 * 60 * 60 * 1000;
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export function createLocalBlobStore(root: string): BlobStore {
  const incoming = path.join(root, INCOMING);
  void removeStaleIncoming(incoming);

  return {
    async put(key, body, options = {}) {
      const target = path.join(root, requireBlobKey(key));
      await fsp.mkdir(incoming, { recursive: true, mode: DIR_MODE });
      const temp = path.join(incoming, randomBytes(12).toString("hex"));
      const counted = countedStream(body);
      try {
        // The write stream pulls from the body only as fast as the disk takes it. It is not opened
        // with `flush`, which syncs on every close, also when a failed or abandoned put destroys
        // it: the removal of bytes nobody will read then waited for the disk (behind whatever else
        // the machine writes: seconds when it is busy, for good when it stalls). Only a complete
        // body is flushed, before the rename makes it visible.
        await pipeline(
          counted.stream,
          fs.createWriteStream(temp, { flags: "wx", mode: FILE_MODE }),
          options.signal ? { signal: options.signal } : {},
        );
        await flushToDisk(temp);
        await fsp.mkdir(path.dirname(target), { recursive: true, mode: DIR_MODE });
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

/** A written file's bytes on the disk, so that a crash after its rename finds it whole. */
async function flushToDisk(file: string): Promise<void> {
  const handle = await fsp.open(file, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Written once a whole tree has been narrowed: later starts walk nothing. */
const NARROWED = ".modes-narrowed";

/**
 * Narrows what is wider than the store's modes in an existing tree (a store written before they
 * were set, or files copied in), once: a marker records a finished walk, and a start cut short
 * walks again. One entry at a time, in the background (nothing waits for it), holding no more
 * than the directories still to visit; symbolic links are not followed. What was narrowed is
 * logged.
 */
export async function narrowModes(root: string, log: Logger): Promise<void> {
  const marker = path.join(root, NARROWED);
  if (
    await fsp.access(marker).then(
      () => true,
      () => false,
    )
  )
    return;
  let narrowed = 0;
  const narrow = async (file: string, wanted: number) => {
    const { mode } = await fsp.lstat(file);
    if ((mode & 0o777 & ~wanted) === 0) return;
    await fsp.chmod(file, mode & wanted);
    narrowed++;
  };
  const dirs = [root];
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    try {
      await narrow(dir, DIR_MODE);
      for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) dirs.push(file);
        else if (entry.isFile()) await narrow(file, FILE_MODE).catch(ignoreMissing);
      }
    } catch (err) {
      ignoreMissing(err);
    }
  }
  if (narrowed > 0)
    log.warn({ root, narrowed }, "stored files were readable by other OS users; narrowed them to the gateway's user");
  await fsp.writeFile(marker, "", { mode: FILE_MODE }).catch(ignoreMissing);
}

/** Removed meanwhile (a delete, an expiry), or the store does not exist yet: nothing to narrow. */
function ignoreMissing(err: unknown): void {
  if (!isMissing(err)) throw err;
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

import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import * as assert from "uvu/assert";
import { createLocalBlobStore } from "../../../server/platform/storage/local-blob-store.js";
import { eventually } from "../../support/eventually.js";
import { suite } from "../../support/suite.js";
import { makeTempDir, removeTempDir } from "../../support/temp-dirs.js";

/**
 * When the local blob store flushes a put to disk. A flush waits for the disk, behind whatever
 * else the machine is writing; on a busy machine that is seconds, and a put that failed or was
 * abandoned must not wait for one before its temporary file is removed: there is nothing to keep.
 * A complete put is flushed before it becomes visible under its key. The disk is stood in for by
 * patching the two ways node flushes a file (`fs.fsync`, which write streams opened with `flush`
 * call on close, and FileHandle's `sync`).
 */
interface Flushes {
  /** In order: "flush" for each flush started, "rename" for each rename. */
  events: string[];
  /** While set, a flush never completes: a disk that does not come back. */
  stalled: boolean;
}

type FsyncCallback = (err: NodeJS.ErrnoException | null) => void;
type Fsync = (fd: number, callback: FsyncCallback) => void;
type Sync = (this: fsp.FileHandle) => Promise<void>;

const test = suite<{ dir: string; flushes: Flushes; restore: () => void }>("storage: when a local put is flushed");

test.before.each(async (context) => {
  context.dir = makeTempDir("local-blob-flush");
  const flushes: Flushes = { events: [], stalled: false };
  const handle = await fsp.open(path.join(context.dir, "probe"), "w");
  const fileHandle = Object.getPrototypeOf(handle) as { sync: Sync };
  await handle.close();
  const originalFsync = fs.fsync as Fsync;
  const originalSync = fileHandle.sync;
  const originalRename = fsp.rename;
  const patchedFsync: Fsync = (fd, callback) => {
    flushes.events.push("flush");
    if (!flushes.stalled) originalFsync(fd, callback);
  };
  (fs as { fsync: Fsync }).fsync = patchedFsync;
  fileHandle.sync = function (this: fsp.FileHandle) {
    flushes.events.push("flush");
    return flushes.stalled ? new Promise<void>(() => {}) : originalSync.call(this);
  };
  fsp.rename = async (...args: Parameters<typeof fsp.rename>) => {
    flushes.events.push("rename");
    return originalRename(...args);
  };
  context.flushes = flushes;
  context.restore = () => {
    (fs as { fsync: Fsync }).fsync = originalFsync;
    fileHandle.sync = originalSync;
    fsp.rename = originalRename;
  };
});

test.after.each(async ({ dir, restore }) => {
  restore();
  await removeTempDir(dir);
});

async function* bytesThenBreak(): AsyncGenerator<Uint8Array> {
  yield Buffer.alloc(64 * 1024, 1);
  throw new Error("the client went away");
}

async function* bytesThenWait(): AsyncGenerator<Uint8Array> {
  yield Buffer.alloc(64 * 1024, 1);
  await new Promise(() => {});
}

const incoming = (dir: string) => fsp.readdir(path.join(dir, ".incoming")).catch(() => []);

/**
 * How a put ended, read without awaiting it: a put stuck on a flush never settles, and the test
 * must then fail (eventually's guard) rather than hang.
 */
function tracked(put: Promise<unknown>): { outcome?: "stored" | "failed" } {
  const state: { outcome?: "stored" | "failed" } = {};
  put.then(
    () => (state.outcome = "stored"),
    () => (state.outcome = "failed"),
  );
  return state;
}

test("a put whose body breaks off is removed without waiting for the disk: no flush, no file left", async ({
  dir,
  flushes,
}) => {
  flushes.stalled = true;
  const store = createLocalBlobStore(dir);
  const put = tracked(store.put("files/broken", bytesThenBreak()));
  assert.is(await eventually(() => put.outcome, "the broken put settles"), "failed");
  assert.equal(await incoming(dir), []);
  assert.not.ok(fs.existsSync(path.join(dir, "files/broken")));
  assert.equal(flushes.events, []);
});

test("a put abandoned by its caller (the signal) while the body waits is removed without waiting for the disk", async ({
  dir,
  flushes,
}) => {
  flushes.stalled = true;
  const store = createLocalBlobStore(dir);
  const abort = new AbortController();
  const put = tracked(store.put("files/abandoned", bytesThenWait(), { signal: abort.signal }));
  await eventually(() => incoming(dir), "the put is writing", { until: (files) => files.length === 1 });
  abort.abort();
  assert.is(await eventually(() => put.outcome, "the abandoned put settles"), "failed");
  assert.equal(await incoming(dir), []);
  assert.equal(flushes.events, []);
});

test("a complete put is flushed once, before the rename that makes it visible", async ({ dir, flushes }) => {
  const store = createLocalBlobStore(dir);
  const { size } = await store.put("files/whole", bytesThenEnd());
  assert.is(size, 3);
  assert.is(fs.readFileSync(path.join(dir, "files/whole"), "utf8"), "abc");
  assert.equal(flushes.events, ["flush", "rename"]);
  assert.equal(await incoming(dir), []);
});

async function* bytesThenEnd(): AsyncGenerator<Uint8Array> {
  yield Buffer.from("abc");
}

test.run();

import { mkdtempSync, rmSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * The temporary directories test helpers make: catalogs, gateways' data directories (which hold
 * operator tokens, master keys and uploaded bytes), written service-account keys. Their owner
 * removes each in its stop(); whatever is still here when the process exits (a setup that threw
 * before its stop() was reachable, a test that never stopped what it started) is removed then, so
 * that no secret a test wrote outlives its run in the system's temporary directory.
 */
const live = new Set<string>();

/** A fresh directory under the system's temporary directory, named `<prefix>-XXXXXX`. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  live.add(dir);
  return dir;
}

/** Removes a directory made by makeTempDir, with everything in it. */
export async function removeTempDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  live.delete(dir);
}

// Synchronous: nothing asynchronous runs once the process is exiting (a worker exits on the runner's word).
process.on("exit", () => {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
});

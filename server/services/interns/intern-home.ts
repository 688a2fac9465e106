import { execFile } from "node:child_process";
import { access, chmod, chown, mkdir, readdir, readFile, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Sequelize } from "sequelize";
import type { GatewayConfig } from "../../platform/config.js";
import { makeTraversable } from "../../platform/db/traversable.js";
import type { Logger } from "../../platform/logger.js";
import { shellNumberOf } from "./intern-store.js";
import type { ShellUser } from "../../../wire/host-protocol.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * An intern's place on this instance's disk (`<GATEWAY_INTERN_HOME_DIR>/<id>`: `work` for its
 * shell, `tmp` for its shell's TMPDIR, `state` for its sessions) and the OS user its shell runs as.
 *
 * The shell runs commands a model chose. A gateway running as root therefore gives each intern's
 * shell its own uid/gid (GATEWAY_INTERN_SHELL_UID_BASE + the intern's `shell_number`, no passwd
 * entry needed): `work` and `tmp` are that user's alone (0700), while `state` and every other
 * intern's directories stay out of its reach. The homes' root is 0711, so no intern can list the
 * others. It lies outside the data directory, which stays closed to every other user
 * (server/platform/storage/private-paths.ts): the master key, the database, the config and the stored files are
 * not on any intern's way to its home. A gateway that is not root cannot change users; its
 * interns' shells run as itself (docs/api/interns.md says what that means).
 */
export interface InternHome {
  home: string;
  workDir: string;
  stateDir: string;
  /** The shell's TMPDIR, as private as `workDir`. */
  tmpDir: string;
  /** The shell's own user; null when the shell runs as the gateway's user. */
  shellUser: ShellUser | null;
}

export function shellIsolation(config: GatewayConfig): boolean {
  return config.internRuntime.shellUidBase > 0 && process.getuid?.() === 0;
}

export function internHomeDir(config: GatewayConfig, internId: string): string {
  return path.join(config.internRuntime.homeDir, internId);
}

/** Creates (or re-owns) the intern's directories for a new host. */
export async function prepareInternHome(
  config: GatewayConfig,
  sequelize: Sequelize,
  internId: string,
): Promise<InternHome> {
  const root = config.internRuntime.homeDir;
  const home = internHomeDir(config, internId);
  const workDir = path.join(home, "work");
  const stateDir = path.join(home, "state");
  const tmpDir = path.join(home, "tmp");
  const shellUser = shellIsolation(config) ? await shellUserOf(config, sequelize, internId) : null;
  // Without users of their own, nobody but the gateway's user needs to pass.
  const passable = shellUser ? 0o711 : 0o700;
  await mkdir(root, { recursive: true, mode: passable });
  for (const dir of [workDir, stateDir, tmpDir]) await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(root, passable);
  await chmod(home, passable);
  await chmod(stateDir, 0o700);
  for (const own of [workDir, tmpDir]) {
    if (shellUser) await chown(own, shellUser.uid, shellUser.gid);
    await chmod(own, 0o700);
  }
  if (shellUser) await makeTraversable(root);
  return { home, workDir, stateDir, tmpDir, shellUser };
}

/** The intern's files on this instance's disk, gone with the intern. */
export async function removeInternHome(config: GatewayConfig, internId: string): Promise<void> {
  await rm(internHomeDir(config, internId), { recursive: true, force: true });
}

/**
 * Homes used to be `<dataDir>/interns/<id>`. They are moved to GATEWAY_INTERN_HOME_DIR, since a
 * restart keeps an intern's files (docs/api/interns.md); a home that exists in both places is left
 * where it was and named in the log. Across file systems the move is `cp -a` (owners and modes
 * kept) and then the old copy is removed.
 */
export async function moveHomesOutOfDataDir(config: GatewayConfig, log: Logger): Promise<void> {
  const legacy = path.join(config.dataDir, "interns");
  let names: string[];
  try {
    names = await readdir(legacy);
  } catch {
    return; // nothing there: a new install, or moved already
  }
  const root = config.internRuntime.homeDir;
  await mkdir(root, { recursive: true, mode: 0o700 });
  const moved: string[] = [];
  for (const name of names) {
    const from = path.join(legacy, name);
    const to = path.join(root, name);
    try {
      await moveDir(from, to);
      moved.push(name);
    } catch (err) {
      log.error(
        { from, to, err: errorMessage(err) },
        "an intern's home could not be moved out of the data directory; move it by hand",
      );
    }
  }
  await rmdir(legacy).catch(() => undefined);
  if (moved.length > 0)
    log.info({ from: legacy, to: root, interns: moved.length }, "moved the interns' homes out of the data directory");
}

async function moveDir(from: string, to: string): Promise<void> {
  if (
    await access(to).then(
      () => true,
      () => false,
    )
  )
    throw new Error(`${to} exists already`);
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    await promisify(execFile)("cp", ["-a", "--", from, to]);
    await rm(from, { recursive: true, force: true });
  }
}

async function shellUserOf(config: GatewayConfig, sequelize: Sequelize, internId: string): Promise<ShellUser> {
  const shellNumber = await shellNumberOf(sequelize, internId);
  if (shellNumber === undefined) throw new Error(`intern ${internId} no longer exists`);
  const id = config.internRuntime.shellUidBase + shellNumber;
  return { uid: id, gid: id };
}

/**
 * Ends every process of the shell's user: what its commands left running in the background
 * (`server &`), also after a host that crashed could not end them. Only for an isolated shell,
 * whose uid nothing else uses.
 */
export async function killProcessesOf(user: ShellUser): Promise<void> {
  const pids = (await readdir("/proc").catch(() => [] as string[])).filter((name) => /^\d+$/.test(name));
  await Promise.all(
    pids.map(async (pid) => {
      const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      const realUid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      if (realUid !== undefined && Number(realUid) === user.uid) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // Gone meanwhile.
        }
      }
    }),
  );
}

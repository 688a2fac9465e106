import { chmod, chown, mkdir, readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Sequelize } from "sequelize";
import type { GatewayConfig } from "../config.js";
import { makeTraversable } from "../db/traversable.js";
import { shellNumberOf } from "./intern-store.js";

/**
 * An intern's place on this instance's disk (`<dataDir>/interns/<id>`: `work` for its shell,
 * `state` for its sessions) and the OS user its shell runs as.
 *
 * The shell runs commands a model chose. A gateway running as root therefore gives each intern's
 * shell its own uid/gid (GATEWAY_INTERN_SHELL_UID_BASE + the intern's `shell_number`, no passwd
 * entry needed): `work` is that user's alone (0700), while `state`, the data directory's secrets
 * (master key, database password, the cluster) and every other intern's directories stay out of
 * its reach. `interns/` itself is 0711, so no intern can list the others. A gateway that is not
 * root cannot change users; its interns' shells run as itself (docs/api/interns.md says what that means).
 */
export interface InternHome {
  home: string;
  workDir: string;
  stateDir: string;
  /** The shell's own user; null when the shell runs as the gateway's user. */
  shellUser: ShellUser | null;
}

export interface ShellUser {
  uid: number;
  gid: number;
}

export function shellIsolation(config: GatewayConfig): boolean {
  return config.internRuntime.shellUidBase > 0 && process.getuid?.() === 0;
}

export function internHomeDir(config: GatewayConfig, internId: string): string {
  return path.join(config.dataDir, "interns", internId);
}

/** Creates (or re-owns) the intern's directories for a new host. */
export async function prepareInternHome(config: GatewayConfig, sequelize: Sequelize, internId: string): Promise<InternHome> {
  const home = internHomeDir(config, internId);
  const workDir = path.join(home, "work");
  const stateDir = path.join(home, "state");
  const shellUser = shellIsolation(config) ? await shellUserOf(config, sequelize, internId) : null;
  await mkdir(workDir, { recursive: true });
  await mkdir(stateDir, { recursive: true });
  if (shellUser) {
    await chmod(path.dirname(home), 0o711);
    await chmod(home, 0o711);
    await chmod(stateDir, 0o700);
    await chown(workDir, shellUser.uid, shellUser.gid);
    await chmod(workDir, 0o700);
    await makeTraversable(path.dirname(home));
  }
  return { home, workDir, stateDir, shellUser };
}

/** The intern's files on this instance's disk, gone with the intern. */
export async function removeInternHome(config: GatewayConfig, internId: string): Promise<void> {
  await rm(internHomeDir(config, internId), { recursive: true, force: true });
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

import { spawn } from "node:child_process";
import type { ShellUser } from "../intern-home.js";

/**
 * The shell tool: `/bin/sh -c <command>` in the intern's own working directory, as the intern's
 * own OS user when the gateway gives it one (intern-home.ts), with a time limit (the whole process
 * group is killed) and an output limit (each stream cut at `outputBytes`). The environment is a
 * minimal one of its own: the host's credentials are not in it, and HOME is the working directory.
 * What a command leaves running in the background lives until the host stops (`endShellGroups`).
 */
export interface ShellSettings {
  timeoutMs: number;
  outputBytes: number;
  /** The intern's own OS user; null: the host's user. */
  user: ShellUser | null;
}

/** Process groups of this host's commands, some maybe still running in the background. */
const groups = new Set<number>();

/** Ends everything the shell started (the host is stopping). */
export function endShellGroups(): void {
  for (const pgid of groups) killGroup(pgid);
  groups.clear();
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

export interface ShellResult {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timed_out: boolean;
}

export function runShell(command: string, workDir: string, settings: ShellSettings, signal: AbortSignal): Promise<ShellResult> {
  const { user } = settings;
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: workDir,
      env: { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: workDir, LANG: "C.UTF-8" },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so a timeout or cancel also ends what the command started.
      detached: true,
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    const pgid = child.pid;
    if (pgid !== undefined) groups.add(pgid);
    const out = collector(settings.outputBytes);
    const err = collector(settings.outputBytes);
    child.stdout.on("data", out.add);
    child.stderr.on("data", err.add);
    let timedOut = false;
    const end = () => {
      if (pgid !== undefined) killGroup(pgid);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      end();
    }, settings.timeoutMs);
    const onAbort = () => end();
    signal.addEventListener("abort", onAbort, { once: true });
    child.once("error", (error) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.once("close", (code, closeSignal) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve({
        exit_code: code,
        signal: closeSignal,
        stdout: out.text(),
        stderr: err.text(),
        truncated: out.truncated() || err.truncated(),
        timed_out: timedOut,
      });
    });
  });
}

function collector(limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  return {
    add: (chunk: Buffer) => {
      if (size >= limit) {
        cut = true;
        return;
      }
      const part = chunk.subarray(0, limit - size);
      if (part.length < chunk.length) cut = true;
      chunks.push(part);
      size += part.length;
    },
    text: () => Buffer.concat(chunks).toString("utf8"),
    truncated: () => cut,
  };
}

import { spawn } from "node:child_process";
import type { ShellLimits, ShellUser } from "../../wire/host-protocol.js";

/**
 * The shell tool: `/bin/sh -c <command>` in the intern's own working directory, as the intern's
 * own OS user when the gateway gives it one (intern-home.ts), with a time limit (the whole process
 * group is killed) and an output limit (each stream cut at `outputBytes`). The environment is a
 * minimal one of its own: the host's credentials are not in it, HOME is the working directory and
 * TMPDIR the intern's own temporary directory. The command runs with umask 077, so that what it
 * writes, in the shared /tmp too, is its user's alone, and under rlimits that prlimit (util-linux)
 * sets before the shell starts, hard and soft alike so that no command can raise them: address
 * space, file size and CPU time of each process, no core files, and the number of processes of its
 * user (only a user of its own: the gateway's user also counts the gateway's threads and its
 * database). A fork bomb stops at that number, `dd` of an endless file at the file size.
 * What a command leaves running in the background lives until the host stops (`endShellGroups`).
 */
export interface ShellSettings {
  timeoutMs: number;
  outputBytes: number;
  /** The intern's own OS user; null: the host's user. */
  user: ShellUser | null;
  /** The command's TMPDIR. */
  tmpDir: string;
  limits: ShellLimits;
}

const MIB = 1024 * 1024;
/** Sets the umask, then runs the command (`$1`) as `sh -c` would have: a shell of its own, `$0` as ever. */
const WITH_UMASK = 'umask 077 && exec /bin/sh -c "$1"';

/** The program and arguments that run `command` under the settings' limits. */
export function limitedCommand(command: string, settings: Pick<ShellSettings, "limits" | "user">): [string, string[]] {
  const { limits, user } = settings;
  const rlimits = [
    `--as=${limits.maxMemoryMiB * MIB}`,
    `--fsize=${limits.maxFileMiB * MIB}`,
    `--cpu=${limits.cpuSeconds}`,
    "--core=0",
  ];
  if (user) rlimits.push(`--nproc=${limits.maxProcesses}`);
  return ["prlimit", [...rlimits, "--", "/bin/sh", "-c", WITH_UMASK, "sh", command]];
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

export function runShell(
  command: string,
  workDir: string,
  settings: ShellSettings,
  signal: AbortSignal,
): Promise<ShellResult> {
  const { user } = settings;
  return new Promise((resolve, reject) => {
    const [program, args] = limitedCommand(command, settings);
    const child = spawn(program, args, {
      cwd: workDir,
      env: {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: workDir,
        TMPDIR: settings.tmpDir,
        LANG: "C.UTF-8",
      },
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
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      // Never without the limits: no prlimit, no shell.
      reject(
        error.code === "ENOENT"
          ? new Error(`${error.message}: is util-linux's prlimit installed, and does ${workDir} exist?`)
          : error,
      );
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

import { spawn } from "node:child_process";

/**
 * The shell tool: `/bin/sh -c <command>` in the intern's own working directory, with a time
 * limit (the whole process group is killed) and an output limit (each stream cut at
 * `outputBytes`). The environment is a minimal one of its own: the host's credentials are not in
 * it, and HOME is the working directory.
 */
export interface ShellLimits {
  timeoutMs: number;
  outputBytes: number;
}

export interface ShellResult {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timed_out: boolean;
}

export function runShell(command: string, workDir: string, limits: ShellLimits, signal: AbortSignal): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: workDir,
      env: { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: workDir, LANG: "C.UTF-8" },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so a timeout or cancel also ends what the command started.
      detached: true,
    });
    const out = collector(limits.outputBytes);
    const err = collector(limits.outputBytes);
    child.stdout.on("data", out.add);
    child.stderr.on("data", err.add);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, limits.timeoutMs);
    const onAbort = () => killGroup();
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

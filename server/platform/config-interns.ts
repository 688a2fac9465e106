import os from "node:os";
import path from "node:path";
import type { InternRuntimeConfig, ShellLimits } from "../../wire/host-protocol.js";
import { type Env, intVar, listVar, nonEmpty, type RenamedVar, resolveVar } from "./config-vars.js";

/**
 * GATEWAY_INTERN_*: the interns' runtime (its types are the host protocol's, wire/host-protocol.ts).
 * loadConfig reads `shellTimeoutMs` before every other setting, so that a start with several bad
 * values still names the same one first.
 */
export function internRuntimeConfig(
  env: Env,
  dataDir: string,
  shellTimeoutMs: number,
  renamedVar: RenamedVar,
): InternRuntimeConfig {
  const internHostListen = nonEmpty(env.GATEWAY_INTERN_HOST_LISTEN) ?? "127.0.0.1";
  return {
    interactionTimeoutSeconds: renamedVar("GATEWAY_INTERN_INTERACTION_TIMEOUT_SECONDS", 300, 1, 86_400),
    runTimeoutSeconds: renamedVar("GATEWAY_INTERN_RUN_TIMEOUT_SECONDS", 3_600, 1, 604_800),
    hostTimeoutMs: intVar(env, "GATEWAY_INTERN_HOST_TIMEOUT_MS", 10_000, 50, 600_000),
    hostStartTimeoutMs: intVar(env, "GATEWAY_INTERN_HOST_START_TIMEOUT_MS", 30_000, 1_000, 600_000),
    leaseMs: intVar(env, "GATEWAY_INTERN_LEASE_MS", 30_000, 300, 3_600_000),
    maxOpenRuns: intVar(env, "GATEWAY_INTERN_MAX_OPEN_RUNS", 8, 1, 100_000),
    turnsPerMinute: intVar(env, "GATEWAY_INTERN_TURNS_PER_MINUTE", 60, 0, 1_000_000),
    replayBytes: intVar(env, "GATEWAY_INTERN_REPLAY_BYTES", 1_048_576, 256, 1_073_741_824),
    maxSteps: intVar(env, "GATEWAY_INTERN_MAX_STEPS", 50, 1, 10_000),
    shellTimeoutMs,
    shellOutputBytes: intVar(env, "GATEWAY_INTERN_SHELL_OUTPUT_BYTES", 65_536, 256, 16_777_216),
    shellUidBase: intVar(env, "GATEWAY_INTERN_SHELL_UID_BASE", 100_000, 0, 2_000_000_000),
    shellLimits: shellLimits(env, shellTimeoutMs),
    homeDir: internHomeDirVar(env, dataDir),
    maxRunningPerOrg: intVar(env, "GATEWAY_INTERN_MAX_RUNNING_PER_ORG", 10, 0, 1_000_000),
    maxRunningPerInstance: intVar(env, "GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE", 32, 0, 1_000_000),
    fetchTimeoutMs: intVar(env, "GATEWAY_INTERN_FETCH_TIMEOUT_MS", 30_000, 100, 600_000),
    fetchBodyBytes: intVar(env, "GATEWAY_INTERN_FETCH_BODY_BYTES", 262_144, 256, 16_777_216),
    fetchResolve: resolveVar(env, "GATEWAY_INTERN_FETCH_RESOLVE"),
    fetchAllowedHosts: listVar(env, "GATEWAY_INTERN_FETCH_ALLOWED_HOSTS"),
    gatewayUrl: nonEmpty(env.GATEWAY_INTERN_GATEWAY_URL),
    hostListen: internHostListen,
    hostAdvertise:
      nonEmpty(env.GATEWAY_INTERN_HOST_ADVERTISE) ??
      (["0.0.0.0", "::"].includes(internHostListen) ? os.hostname() : internHostListen),
  };
}

/** The CPU limit defaults to the shell's time limit: a command never needs more than it may run. */
function shellLimits(env: Env, shellTimeoutMs: number): ShellLimits {
  return {
    maxProcesses: intVar(env, "GATEWAY_INTERN_SHELL_MAX_PROCESSES", 256, 1, 1_000_000),
    maxMemoryMiB: intVar(env, "GATEWAY_INTERN_SHELL_MAX_MEMORY_MIB", 1_024, 16, 1_048_576),
    maxFileMiB: intVar(env, "GATEWAY_INTERN_SHELL_MAX_FILE_MIB", 1_024, 1, 1_048_576),
    cpuSeconds: intVar(env, "GATEWAY_INTERN_SHELL_CPU_SECONDS", Math.ceil(shellTimeoutMs / 1000), 1, 86_400),
  };
}

/**
 * Default `<dataDir>-interns`: beside the data directory (the same volume, as a rule, so a restart
 * keeps the homes) but not in it. Inside it, the data directory would have to let the interns'
 * users through; a home directory that holds the data directory would hand it to them.
 */
function internHomeDirVar(env: Env, dataDir: string): string {
  const dir = path.resolve(nonEmpty(env.GATEWAY_INTERN_HOME_DIR) ?? `${dataDir}-interns`);
  const within = (inner: string, outer: string) => inner === outer || inner.startsWith(outer + path.sep);
  if (within(dir, dataDir) || within(dataDir, dir)) {
    throw new Error(
      `GATEWAY_INTERN_HOME_DIR (${dir}) must be outside GATEWAY_DATA_DIR (${dataDir}), and the other way round`,
    );
  }
  return dir;
}

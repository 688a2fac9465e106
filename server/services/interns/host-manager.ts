import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Sequelize } from "sequelize";
import type { GatewayConfig } from "../../platform/config.js";
import { open, seal } from "../../platform/secrets/secret-box.js";
import type { Logger } from "../../platform/logger.js";
import type {
  HostConfig,
  HostLimits,
  HostMessage,
  InternRuntimeConfig,
  ParentMessage,
  ReleasedSecret,
  ShellUser,
} from "../../../wire/host-protocol.js";
import {
  killProcessesOf,
  moveHomesOutOfDataDir,
  prepareInternHome,
  removeInternHome,
  shellIsolation,
} from "./intern-home.js";
import { HostCallError, hostCall } from "./intern-host-client.js";
import type { InternHostAccess, InternHosts, InternHostStart } from "./intern-hosts.js";
import { deleteHost, recordedHost, registerHost, unregisterHost } from "./intern-store-hosts.js";
import type { ShellEgress } from "./shell-egress.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * Intern hosts as child processes of this gateway instance (cmd/intern-host.ts). Each
 * gets a random token and the intern's own API key over its IPC channel, listens on a random port
 * (of 127.0.0.1 unless GATEWAY_INTERN_HOST_LISTEN says otherwise), and is recorded in
 * `intern_hosts` (token sealed) so that every instance on the database can relay to it. The child
 * answers the fetch tool's secret releases through its parent, so vault values never travel further
 * than the host that uses them. A host whose parent goes away exits (it watches the IPC channel),
 * so none outlives its gateway.
 */
export interface InternHostsOptions {
  config: GatewayConfig;
  log: Logger;
  sequelize: Sequelize;
  masterKey: Buffer;
  /** The vault's release: the intern's secrets bound to exactly this URL's host. */
  releaseSecrets(internId: string, url: string): Promise<ReleasedSecret[]>;
  /** The REST base URL the hosts' model calls use (known once this instance listens). */
  gatewayUrl(): string;
  /** This instance's HTTP and gRPC ports (known once it listens), which the hosts' fetch tool never reaches. */
  gatewayPorts(): number[];
  /**
   * The interns' shells' egress rules: each host's port is closed to them on every address while
   * the host runs, since a host on GATEWAY_INTERN_HOST_LISTEN=0.0.0.0 answers on this machine's
   * public address too.
   */
  shellPorts: Pick<ShellEgress, "closePort" | "reopenPort">;
}

/** This process's hosts, for tests that need to break one (SIGKILL, SIGSTOP). */
export interface LocalInternHosts extends InternHosts {
  pid(internId: string): number | undefined;
}

interface LocalHost {
  child: ChildProcess;
  access: InternHostAccess;
  exited: Promise<void>;
  onExit(): void;
  shellUser: ShellUser | null;
  /** Set when this gateway stops it: any other exit is a crash. */
  stopping: boolean;
  /** Settles once the exit is handled (the row is gone). */
  forgotten: Promise<void>;
}

/** The host's entry point; spawned, never imported (nothing imports cmd/). */
const HOST_MAIN = fileURLToPath(new URL("../../../cmd/intern-host.ts", import.meta.url));
const TSX_LOADER = import.meta.resolve("tsx");
const STOP_GRACE_MS = 5_000;
const TOTAL_STEPS = 4;

export function createInternHosts(options: InternHostsOptions): LocalInternHosts {
  const { config, log, sequelize, masterKey } = options;
  const limits = config.internRuntime;
  const instanceId = randomUUID();
  const local = new Map<string, LocalHost>();
  const starting = new Map<string, Promise<InternHostAccess>>();

  /**
   * Whether the host answers its health check. One that does not answer in time is not one that is
   * gone: that throws (HostCallError `timeout`).
   */
  async function healthy(access: InternHostAccess, signal: AbortSignal): Promise<boolean> {
    try {
      return (await hostCall(access, "GET", "/health", undefined, limits.hostTimeoutMs, signal)).status === 200;
    } catch (err) {
      if (err instanceof HostCallError && err.kind === "timeout") throw err;
      return false;
    }
  }

  // Before any host starts: a home still in the data directory is moved out first.
  const homesMoved = moveHomesOutOfDataDir(config, log).catch((err: unknown) =>
    log.error({ err: errorMessage(err) }, "the interns' homes could not be moved out of the data directory"),
  );

  // Shell commands run only under their limits (shell-tool.ts): without prlimit, none runs.
  execFile("prlimit", ["--version"], (err) => {
    if (err)
      log.error(
        { err: err.message },
        "prlimit (util-linux) cannot be run: interns' shell commands will fail; install util-linux",
      );
  });

  if (!shellIsolation(config)) {
    log.warn(
      "intern shells run as the gateway's own OS user: " +
        "an intern's commands can read what the gateway can (run as root for an OS user per intern)",
    );
  }

  async function launch(
    { intern, apiKey, onStep, onExit }: InternHostStart,
    signal: AbortSignal,
  ): Promise<InternHostAccess> {
    // Never an earlier host: each start comes with a new key, and the old host holds a revoked one.
    await stopRegistered(intern.id);
    const step = (number: number, label: string) => onStep({ number, total: TOTAL_STEPS, label });
    step(1, "Preparing the working directory");
    await homesMoved;
    const home = await prepareInternHome(config, sequelize, intern.id);
    // What the shell of a host that crashed left running.
    if (home.shellUser) await killProcessesOf(home.shellUser);
    signal.throwIfAborted();

    step(2, "Starting the runtime");
    const token = randomBytes(32).toString("base64url");
    const child = spawn(process.execPath, ["--import", TSX_LOADER, HOST_MAIN], {
      cwd: home.home,
      // Not the gateway's environment: its database URL, master key and provider keys are not passed on.
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home.workDir,
        LANG: "C.UTF-8",
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    // A failed spawn or IPC send is an `error` event; unheard, it would end the gateway.
    child.on("error", (err) => log.warn({ internId: intern.id, err: err.message }, "intern host process error"));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) =>
        log.warn({ internId: intern.id, line: line.slice(0, 500) }, "intern host output"),
      );
    }
    const hostConfig: HostConfig = {
      internId: intern.id,
      token,
      apiKey,
      gatewayUrl: limits.gatewayUrl ?? options.gatewayUrl(),
      // The record keeps "" for "not set".
      model: intern.model || null,
      instructions: intern.instructions,
      workDir: home.workDir,
      stateDir: home.stateDir,
      shellUser: home.shellUser,
      tmpDir: home.tmpDir,
      limits: hostLimits(limits),
      fetchResolve: limits.fetchResolve,
      fetchAllowedHosts: limits.fetchAllowedHosts,
      gatewayPorts: options.gatewayPorts(),
      listenAddress: limits.hostListen,
    };
    try {
      const port = await ready(child, hostConfig, limits.hostStartTimeoutMs, signal);
      // Before its intern's first command; open again once the process is gone, however it ends.
      await options.shellPorts.closePort(port);
      void exited.then(() => options.shellPorts.reopenPort(port));
      const access = { origin: originOf(limits.hostAdvertise, port), token };
      step(3, "Checking the runtime");
      if (!(await healthy(access, signal))) throw new Error("the intern's runtime does not answer its health check");
      step(4, "Registering the runtime");
      await registerHost(sequelize, {
        internId: intern.id,
        origin: access.origin,
        sealedToken: seal(masterKey, token, tokenContext(intern.id)),
        instanceId,
        pid: child.pid ?? null,
      });
      const host: LocalHost = {
        child,
        access,
        exited,
        onExit,
        shellUser: home.shellUser,
        stopping: false,
        forgotten: Promise.resolve(),
      };
      host.forgotten = exited.then(() => forget(intern.id, host));
      local.set(intern.id, host);
      child.on("message", (message: HostMessage) => answerChild(intern.id, child, message));
      // Cancelled while registering: a suspend or delete already looked for this host and found none.
      if (signal.aborted) {
        await stopLocal(host);
        signal.throwIfAborted();
      }
      log.info({ internId: intern.id, origin: access.origin, pid: child.pid }, "intern host started");
      return access;
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
  }

  /** The fetch tool's question: which secrets may go to this URL. Values only ever go to the child. */
  function answerChild(internId: string, child: ChildProcess, message: HostMessage): void {
    if (message.type !== "secrets") return;
    const reply = (answer: ParentMessage) => {
      if (child.connected) child.send(answer);
    };
    options.releaseSecrets(internId, message.url).then(
      (secrets) => reply({ type: "secrets", id: message.id, secrets }),
      (err: unknown) => {
        log.warn({ internId, err: errorMessage(err) }, "secret release failed");
        reply({ type: "secrets", id: message.id, error: "the vault could not release secrets" });
      },
    );
  }

  async function forget(internId: string, host: LocalHost): Promise<void> {
    if (local.get(internId) === host) local.delete(internId);
    if (host.shellUser) await killProcessesOf(host.shellUser);
    const exit = { internId, code: host.child.exitCode, signal: host.child.signalCode };
    if (host.stopping) log.info(exit, "intern host stopped");
    else log.warn(exit, "intern host exited unexpectedly");
    await unregisterHost(sequelize, { internId, instanceId, pid: host.child.pid ?? null }).catch((err: unknown) =>
      log.warn({ internId, err: errorMessage(err) }, "could not unregister an intern host"),
    );
    if (!host.stopping) host.onExit();
  }

  /** Stops the intern's host wherever it runs; waits for a start in progress here first. */
  async function stopAny(internId: string): Promise<void> {
    await starting.get(internId)?.catch(() => undefined);
    await stopRegistered(internId);
  }

  async function stopRegistered(internId: string): Promise<void> {
    const host = local.get(internId);
    if (host) return stopLocal(host);
    // Another instance's child: asked to stop over its API.
    const recorded = await recordedHostAccess(sequelize, masterKey, internId);
    if (recorded) await hostCall(recorded, "POST", "/shutdown", undefined, limits.hostTimeoutMs).catch(() => undefined);
    await deleteHost(sequelize, internId);
  }

  async function stopLocal(host: LocalHost): Promise<void> {
    host.stopping = true;
    if (host.child.connected) host.child.send({ type: "shutdown" } satisfies ParentMessage);
    else host.child.kill("SIGTERM");
    const killer = setTimeout(() => host.child.kill("SIGKILL"), STOP_GRACE_MS);
    await host.exited;
    clearTimeout(killer);
    await host.forgotten;
  }

  return {
    start(request, signal) {
      const id = request.intern.id;
      const pending = starting.get(id);
      if (pending) return pending;
      const started = launch(request, signal).finally(() => starting.delete(id));
      starting.set(id, started);
      return started;
    },

    stop: stopAny,

    async destroy(internId) {
      await stopAny(internId);
      await removeInternHome(config, internId);
    },

    recorded: (internId) => recordedHostAccess(sequelize, masterKey, internId),

    async access(internId, signal) {
      const recorded = await recordedHostAccess(sequelize, masterKey, internId);
      return recorded && (await healthy(recorded, signal)) ? recorded : undefined;
    },

    async close() {
      await Promise.all([...local.values()].map(stopLocal));
    },

    pid(internId) {
      return local.get(internId)?.child.pid;
    },
  };
}

/** The settings the host applies itself, and nothing else of the configuration. */
function hostLimits(limits: InternRuntimeConfig): HostLimits {
  const {
    maxOpenRuns,
    replayBytes,
    maxSteps,
    shellTimeoutMs,
    shellOutputBytes,
    shellLimits,
    fetchTimeoutMs,
    fetchBodyBytes,
  } = limits;
  return {
    maxOpenRuns,
    replayBytes,
    maxSteps,
    shellTimeoutMs,
    shellOutputBytes,
    shellLimits,
    fetchTimeoutMs,
    fetchBodyBytes,
    interactionTimeoutMs: limits.interactionTimeoutSeconds * 1000,
    runTimeoutMs: limits.runTimeoutSeconds * 1000,
  };
}

/** Where the intern's host listens, as recorded by the instance that started it. */
async function recordedHostAccess(
  sequelize: Sequelize,
  masterKey: Buffer,
  internId: string,
): Promise<InternHostAccess | undefined> {
  const row = await recordedHost(sequelize, internId);
  return row ? { origin: row.origin, token: open(masterKey, row.sealed_token, tokenContext(internId)) } : undefined;
}

function originOf(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

function tokenContext(internId: string): string {
  return `intern-host-token:${internId}`;
}

/** Sends the configuration and waits for the host's `ready` with its port. */
function ready(child: ChildProcess, config: HostConfig, timeoutMs: number, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error("the intern's runtime did not start in time")), timeoutMs);
    const onMessage = (message: HostMessage) => {
      if (message.type === "ready") done(undefined, message.port);
    };
    const onExit = (code: number | null) =>
      done(new Error(`the intern's runtime exited while starting (code ${code})`));
    const onError = (err: Error) => done(new Error(`the intern's runtime could not be started: ${err.message}`));
    const onAbort = () => done(signal.reason instanceof Error ? signal.reason : new Error("start aborted"));
    function done(err: Error | undefined, port?: number) {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      child.off("error", onError);
      signal.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve(port!);
    }
    child.on("message", onMessage);
    child.once("exit", onExit);
    child.once("error", onError);
    signal.addEventListener("abort", onAbort, { once: true });
    child.send({ type: "config", config } satisfies ParentMessage);
  });
}

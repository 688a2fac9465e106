import { spawn, type ChildProcess } from "node:child_process";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { SHELL_UID_BASE } from "./gateway.js";
import { makeTempDir, removeTempDir } from "./temp-dirs.js";

/**
 * A gateway in a child process (`cmd/gateway.ts`), for what one process cannot show: a remote
 * core, several instances on one database, a crash. Ready once it logs "gateway listening".
 */
export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  httpPort: number;
  grpcPort: number;
  /** Every stdout/stderr line of the child, for diagnostics and the no-secrets check. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * SIGTERM, then SIGKILL if the child has not exited after a while, so a suite never hangs; then
   * the data directory it was given, unless the caller chose it, is removed.
   */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const ROOT = path.resolve(import.meta.dirname, "../..");
/** Only a guard so that a broken start or stop fails the suite instead of hanging it. */
const START_GUARD_MS = 60_000;
const KILL_AFTER_MS = 8_000;

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface GatewayProcessOptions {
  databaseUrl: string;
  key: string;
  args?: string[];
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** The entry point: the gateway (default), or `cmd/facade.ts`, which logs "facade listening". */
  entry?: "cmd/gateway.ts" | "cmd/facade.ts";
  /** The line that says it is ready, when not its entry's: a cluster's primary logs "all workers listening". */
  ready?: string;
}

export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  const entry = options.entry ?? "cmd/gateway.ts";
  const ready = options.ready ?? (entry === "cmd/facade.ts" ? "facade listening" : "gateway listening");
  const httpPort = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === httpPort) grpcPort = await freePort();
  // Its operator token and master key files go here, not into the repository's .data; a data
  // directory the caller names (to restart on it, to read it) is the caller's to remove.
  const ownDir = options.env?.GATEWAY_DATA_DIR === undefined ? makeTempDir("gateway-process") : undefined;
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), "--import", "tsx", entry, ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: options.databaseUrl,
        HOST: "127.0.0.1",
        PORT: String(httpPort),
        GRPC_PORT: String(grpcPort),
        GATEWAY_BOOTSTRAP_KEY: options.key,
        GATEWAY_SHUTDOWN_GRACE_MS: "2000",
        ...(ownDir ? { GATEWAY_DATA_DIR: path.join(ownDir, "data") } : {}),
        LOG_LEVEL: "info",
        GATEWAY_INTERN_SHELL_UID_BASE: SHELL_UID_BASE,
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  createInterface({ input: child.stderr! }).on("line", (line) => lines.push(line));
  const listening = new Promise<void>((resolve, reject) => {
    const guard = setTimeout(
      () => reject(new Error(`${entry} did not log "${ready}":\n${lines.join("\n")}`)),
      START_GUARD_MS,
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (line.includes(ready)) {
        clearTimeout(guard);
        resolve();
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(guard);
      reject(new Error(`the gateway exited (code ${code}, signal ${signal}) before listening:\n${lines.join("\n")}`));
    });
  });
  try {
    await listening;
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    if (ownDir) await removeTempDir(ownDir);
    throw err;
  }
  return {
    child,
    url: `http://127.0.0.1:${httpPort}`,
    httpPort,
    grpcPort,
    lines,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
      try {
        return await exited;
      } finally {
        clearTimeout(killer);
        if (ownDir) await removeTempDir(ownDir);
      }
    },
  };
}

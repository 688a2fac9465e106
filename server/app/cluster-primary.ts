import cluster, { type Worker } from "node:cluster";
import type { GatewayConfig } from "../platform/config.js";
import type { Logger } from "../platform/logger.js";
import { prepareStart } from "./app.js";
import { showBootstrapKey } from "./bootstrap.js";
import { gatherWorkerMetrics } from "./cluster-metrics.js";
import { RestartPolicy } from "./cluster-restarts.js";
import { isWorkerListening } from "./cluster-worker.js";

/**
 * `npm start` with GATEWAY_WORKERS above 1. This process does once what every worker shares
 * (app.ts `prepareStart`: the catalog and the ports checked, the private paths closed, the
 * embedded PostgreSQL started, migrations, the bootstrap), forks the workers with the database's
 * URL, and serves nothing itself: node:cluster shares the two listening ports among the workers,
 * each a whole gateway instance. A worker that exits is logged and replaced, unless the workers
 * cannot start (cluster-restarts.ts): then the others stop and this process exits 1. SIGTERM or
 * SIGINT: every worker drains (its own stop), then the embedded PostgreSQL stops and this process
 * exits 0 (1 when a worker failed to stop).
 */
export async function runClusterPrimary(config: GatewayConfig, log: Logger): Promise<void> {
  const prepared = await prepareStart(config, log);
  // The workers open their own pools; the primary keeps no connection.
  await prepared.sequelize.close();
  let generatedKey = prepared.generatedKey;
  /** Shown once: when every worker listens, or before a failed start ends (bootstrap.ts). */
  const showKey = () => {
    if (generatedKey) showBootstrapKey(generatedKey, log);
    generatedKey = undefined;
  };

  const alive = new Set<Worker>();
  const serving = new Set<Worker>();
  let phase: "starting" | "serving" | "stopping" = "starting";
  const restarts = new RestartPolicy();
  let exitCode = 0;
  const fork = () => alive.add(cluster.fork({ DATABASE_URL: prepared.databaseUrl }));
  const finish = async () => {
    if (exitCode !== 0) showKey();
    await prepared.embedded?.stop();
    log.info({ exitCode }, "stopped");
    process.exit(exitCode);
  };
  const stop = (code: number) => {
    exitCode = Math.max(exitCode, code);
    if (phase === "stopping") return;
    phase = "stopping";
    // A worker still starting has no handler yet and ends at once; the others drain.
    for (const worker of alive) worker.process.kill("SIGTERM");
    if (alive.size === 0) void finish();
  };

  gatherWorkerMetrics(() => serving, log);
  cluster.on("message", (worker: Worker, message: unknown) => {
    if (!isWorkerListening(message) || !alive.has(worker)) return;
    serving.add(worker);
    restarts.listening();
    if (phase === "starting" && serving.size === config.workers) {
      phase = "serving";
      log.info({ workers: [...serving].map((w) => w.process.pid) }, "all workers listening");
      showKey();
    }
  });
  cluster.on("exit", (worker: Worker, code: number | null, signal: string | null) => {
    alive.delete(worker);
    const listened = serving.delete(worker);
    const who = { worker: worker.id, pid: worker.process.pid, code, signal };
    if (phase === "stopping") {
      // Ended by the signal itself before it had a handler (Ctrl-C reaches the workers too):
      // nothing was running to drain.
      if (code !== 0 && signal !== "SIGTERM" && signal !== "SIGINT") exitCode = 1;
      if (alive.size === 0) void finish();
    } else if (restarts.exited({ listened, firstStart: phase === "starting" }) === "give up") {
      log.fatal(
        who,
        phase === "starting"
          ? "a worker exited before it listened: the gateway cannot start"
          : "replacement workers keep exiting before they listen: giving up",
      );
      stop(1);
    } else {
      log.error(
        who,
        listened
          ? "a worker exited; starting a replacement"
          : "a replacement worker exited before it listened; starting another",
      );
      fork();
    }
  });
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (phase !== "stopping") log.info({ signal }, "shutting down");
      stop(0);
    });
  }
  log.info({ workers: config.workers }, "starting workers");
  for (let i = 0; i < config.workers; i++) fork();
}

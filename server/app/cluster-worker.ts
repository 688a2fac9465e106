import cluster from "node:cluster";
import type { Logger } from "../platform/logger.js";

/** What a worker tells its primary (cluster-primary.ts) once its gateway listens: it serves now. */
export const WORKER_LISTENING = "gateway:worker-listening";

export function isWorkerListening(message: unknown): boolean {
  return typeof message === "object" && message !== null && (message as { type?: unknown }).type === WORKER_LISTENING;
}

/** A worker's log: every line says which worker wrote it (its cluster id, and its pid for `kill`). */
export function workerLogger(log: Logger): Logger {
  return log.child({ worker: cluster.worker?.id, pid: process.pid });
}

export function announceListening(): void {
  process.send?.({ type: WORKER_LISTENING });
}

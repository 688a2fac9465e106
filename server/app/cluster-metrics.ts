import cluster, { type Worker } from "node:cluster";
import type { Logger } from "../platform/logger.js";
import type { MetricsSnapshot } from "./metrics.js";
import { isScrapeMessage, type ScrapeMessage } from "./metrics-endpoint.js";

/** Only a guard: a worker that never answers must not leave a scrape waiting for ever (the scraper gets a 500). */
const GATHER_GUARD_MS = 10_000;

interface Gather {
  asker: Worker;
  /** The asker's own number for its scrape. */
  askerId: number;
  /** Ids of the workers yet to answer. */
  waiting: Set<number>;
  snapshots: MetricsSnapshot[];
  guard: NodeJS.Timeout;
}

/**
 * The primary's side of a cluster's scrape (the protocol: `ScrapeMessage`, metrics-endpoint.ts):
 * the values of every serving worker, and of the asker, handed to the worker the scrape reached,
 * which adds them up. A worker that exits meanwhile is no longer waited for: its counters leave
 * the sum with it, as a restarted process's do.
 */
export function gatherWorkerMetrics(serving: () => Iterable<Worker>, log: Logger): void {
  const gathers = new Map<number, Gather>();
  let next = 0;
  const send = (worker: Worker, message: ScrapeMessage) => {
    // With a callback a closed channel is reported to it rather than thrown at this process as an `error` event.
    if (worker.isConnected())
      worker.send(
        message,
        undefined,
        (err: Error | null) =>
          err && log.debug({ worker: worker.id, err: err.message }, "metrics message not delivered"),
      );
  };
  const finish = (id: number, reply: { snapshots: MetricsSnapshot[] } | { error: string }) => {
    const gather = gathers.get(id);
    if (!gather) return;
    gathers.delete(id);
    clearTimeout(gather.guard);
    send(gather.asker, { type: "gateway:metrics:gathered", id: gather.askerId, ...reply });
  };

  cluster.on("message", (worker: Worker, message: unknown) => {
    if (!isScrapeMessage(message)) return;
    if (message.type === "gateway:metrics:gather") {
      const id = next++;
      const asked = new Set([...serving(), worker].filter((w) => w.isConnected()));
      const guard = setTimeout(
        () =>
          finish(id, {
            error: `workers ${[...(gathers.get(id)?.waiting ?? [])].join(", ")} did not answer with their metrics`,
          }),
        GATHER_GUARD_MS,
      );
      gathers.set(id, {
        asker: worker,
        askerId: message.id,
        waiting: new Set([...asked].map((w) => w.id)),
        snapshots: [],
        guard,
      });
      for (const w of asked) send(w, { type: "gateway:metrics:snapshot", id });
    } else if (message.type === "gateway:metrics:snapshotted") {
      const gather = gathers.get(message.id);
      if (!gather?.waiting.delete(worker.id)) return;
      if (!message.snapshot)
        return finish(message.id, { error: `worker ${worker.id}: ${message.error ?? "no metrics"}` });
      gather.snapshots.push(message.snapshot);
      if (gather.waiting.size === 0) finish(message.id, { snapshots: gather.snapshots });
    }
  });

  cluster.on("exit", (worker: Worker) => {
    for (const [id, gather] of gathers) {
      if (gather.asker === worker) {
        clearTimeout(gather.guard);
        gathers.delete(id);
      } else if (gather.waiting.delete(worker.id) && gather.waiting.size === 0) {
        finish(id, { snapshots: gather.snapshots });
      }
    }
  });
}

import type { Logger } from "../logger.js";
import { isGoneLocalOwner } from "./lease-owner.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * The one loop behind every Postgres queue of the gateway (batch items, native batches, video
 * jobs, interns' runtimes). The queue's own SQL stays with its owner; this file holds the rhythm
 * they share, so that stopping, renewing and recovering work the same everywhere:
 *
 * - `claim(limit)` takes up to `limit` due rows (`FOR UPDATE SKIP LOCKED` and a lease naming this
 *   instance), and `work(item, signal)` runs on each, at most `concurrency` at once;
 * - `renew()` extends the leases this instance holds, every `renewEveryMs`, while work runs;
 * - `releaseDead` hands back at once the leases of a process of this machine that is gone (a
 *   crash, a restart) instead of waiting for them to lapse;
 * - `sweep()` is the queue's maintenance (expiry, retention), run at most every `sweepEveryMs`;
 * - `wake()` looks for work now; `stop()` aborts the work in flight and waits for it.
 *
 * A failing step (the database is away) is logged and tried again at the next poll: an outage only
 * pauses a queue.
 */
export interface LeasedWorkerSpec<T> {
  /** Names the worker in logs ("batch runner"). */
  name: string;
  log: Logger;
  /** Items worked on at once; 0 runs no loop at all. */
  concurrency: number;
  /** The pause between looks for due work when there was none; 0 runs no loop (`runOnce` drives it). */
  pollMs: number;
  claim(limit: number): Promise<readonly T[]>;
  /** Runs one claimed item; failures it leaves uncaught are logged, and its lease lapses. */
  work?(item: T, signal: AbortSignal): Promise<void>;
  renew?: { everyMs: number; run(): Promise<void> };
  /** The leases this worker's queue holds and how to hand one owner's back; `self` is never released. */
  releaseDead?: { self: string; owners(): Promise<readonly string[]>; release(owner: string): Promise<void> };
  sweep?: () => Promise<void>;
  /** How often `releaseDead` and `sweep` run, checked before each claim; 0 means before every claim. */
  sweepEveryMs?: number;
}

export interface LeasedWorker {
  /** Looks for work now instead of at the next poll (a submission arrived, a slot freed). */
  wake(): void;
  /** Releases dead leases, sweeps, claims what is due and waits for that work; how many items were claimed. */
  runOnce(): Promise<number>;
  /** Stops claiming, aborts the work in flight and waits for it to end. */
  stop(): Promise<void>;
}

export function startLeasedWorker<T>(spec: LeasedWorkerSpec<T>): LeasedWorker {
  const { log, concurrency } = spec;
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  // A wake-up that comes while the loop is busy is kept, so the loop does not sleep through it.
  let woken = false;
  let wakeUp: (() => void) | undefined;
  let lastSweep = -Infinity;

  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  async function maintain(): Promise<void> {
    lastSweep = Date.now();
    const dead = spec.releaseDead;
    if (dead) {
      for (const owner of await dead.owners()) {
        if (isGoneLocalOwner(owner, dead.self)) await dead.release(owner);
      }
    }
    await spec.sweep?.();
  }

  function start(item: T): Promise<void> {
    const task = (spec.work?.(item, stopping.signal) ?? Promise.resolve())
      .catch((err: unknown) => {
        if (!stopping.signal.aborted)
          log.warn({ err: errorMessage(err) }, `${spec.name}: work failed; it will be retried`);
      })
      .finally(() => {
        running.delete(task);
        wake();
      });
    running.add(task);
    return task;
  }

  /** One look: maintenance when due, then a claim for the free slots; whether to look again at once. */
  async function tick(): Promise<boolean> {
    if (Date.now() - lastSweep >= (spec.sweepEveryMs ?? 0)) await maintain();
    const free = concurrency - running.size;
    if (free <= 0) return false;
    const items = await spec.claim(free);
    // Without `work`, the claim itself did the work (in its transaction): no task to wait for.
    if (spec.work) for (const item of items) void start(item);
    // A full claim may have left more behind; a partial one emptied what is due.
    return items.length === free && running.size < concurrency;
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      woken = false;
      let again = false;
      try {
        again = await tick();
      } catch (err) {
        log.warn({ err: errorMessage(err) }, `${spec.name}: database step failed; retrying`);
      }
      if (again || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, spec.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    }
  }

  const renewal = spec.renew ? setInterval(() => void renewNow(), spec.renew.everyMs) : undefined;
  renewal?.unref();

  async function renewNow(): Promise<void> {
    await spec.renew
      ?.run()
      .catch((err: unknown) => log.warn({ err: errorMessage(err) }, `${spec.name}: leases could not be renewed`));
  }

  const looping = concurrency > 0 && spec.pollMs > 0 ? loop() : Promise.resolve();

  return {
    wake,
    async runOnce() {
      await maintain();
      const free = concurrency - running.size;
      const items = free > 0 ? await spec.claim(free) : [];
      if (spec.work) await Promise.all(items.map(start));
      return items.length;
    },
    async stop() {
      stopping.abort();
      // As a wake-up: a stop that comes during a look (a claim on its way to the database) must
      // not let the loop start a whole poll's sleep after it.
      wake();
      clearInterval(renewal);
      await looping;
      await Promise.allSettled(running);
    },
  };
}

import { QueryTypes } from "sequelize";
import { newLeaseOwner } from "../core/lease-owner.js";
import type { InferenceRuntime } from "../inference/inference-call.js";
import { advanceJob, type Advancer } from "./video-advance.js";
import type { VideoJobRow } from "./video-jobs.js";
import { deleteOutputs } from "./video-outputs.js";

/**
 * The video job poller of one instance. Jobs live in Postgres: due jobs (`available_at` reached,
 * or past their deadline) are claimed with `FOR UPDATE SKIP LOCKED` and a lease this instance
 * renews while it works on them, so any number of instances share the jobs and the jobs of one
 * that stops or crashes are claimed again once their lease lapses (a clean stop hands them back at
 * once). Each claimed job gets one step (video-advance.ts). A sweep deletes stored outputs whose
 * retention has passed. GATEWAY_VIDEO_POLL_MS sets the pace; 0 runs no loop (`runOnce` drives it).
 */
export interface VideoPoller {
  /** Names this instance's leases; a submission holds its new job under it too. */
  readonly owner: string;
  /** Runs `work` on a job held under this instance's lease, which is renewed until `work` ends. */
  holding<T>(jobId: string, work: () => Promise<T>): Promise<T>;
  /** Claims every due job (up to the concurrency), advances each one step, sweeps; how many were advanced. */
  runOnce(): Promise<number>;
  /** Looks for work now instead of at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

/** Outputs deleted per sweep, so one sweep never holds the loop for long. */
const PURGE_BATCH = 100;
const SWEEP_MS = 10_000;

export function startVideoPoller(runtime: InferenceRuntime): VideoPoller {
  const { deps } = runtime;
  const { sequelize, log } = deps;
  const settings = deps.config.video;
  const owner = newLeaseOwner();
  const stopping = new AbortController();
  const advancer: Advancer = { runtime, owner, settings, signal: stopping.signal };
  const running = new Set<Promise<void>>();
  // Only the jobs being worked on are renewed: a lease left behind by a step that could not finish lapses.
  const held = new Map<string, number>();
  let wakeUp: (() => void) | undefined;
  let lastSweep = 0;

  async function claim(limit: number): Promise<VideoJobRow[]> {
    if (limit <= 0) return [];
    return sequelize.query<VideoJobRow>(
      `WITH picked AS (
         SELECT id FROM video_jobs
          WHERE status IN ('pending', 'in_progress') AND (available_at <= now() OR deadline_at <= now())
            AND (lease_owner IS NULL OR lease_expires_at < now())
          ORDER BY available_at
          LIMIT $limit
          FOR UPDATE SKIP LOCKED
       )
       UPDATE video_jobs j SET lease_owner = $owner, lease_expires_at = now() + make_interval(secs => $lease)
         FROM picked p WHERE j.id = p.id
       RETURNING j.*`,
      { type: QueryTypes.SELECT, bind: { limit, owner, lease: settings.leaseSeconds } },
    );
  }

  async function holding<T>(jobId: string, work: () => Promise<T>): Promise<T> {
    held.set(jobId, (held.get(jobId) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = (held.get(jobId) ?? 1) - 1;
      if (left > 0) held.set(jobId, left);
      else held.delete(jobId);
    }
  }

  function start(job: VideoJobRow): Promise<void> {
    const task = holding(job.id, () => advanceJob(advancer, job))
      .catch((err: unknown) => {
        // The database failed mid-step: the job's lease lapses and it is claimed again.
        log.warn({ job: job.id, err: (err as Error).message }, "video job step could not be recorded; it will be retried");
      })
      .finally(() => {
        running.delete(task);
        wakeUp?.();
      });
    running.add(task);
    return task;
  }

  /** Deletes the stored outputs of jobs whose `expires_at` has passed; reads already refuse them. */
  async function sweep(): Promise<void> {
    const expired = await sequelize.query<Pick<VideoJobRow, "id" | "workspace_id" | "outputs">>(
      `SELECT id, workspace_id, outputs FROM video_jobs
        WHERE outputs_expire_at <= now() AND outputs_purged_at IS NULL
        ORDER BY outputs_expire_at LIMIT $limit`,
      { type: QueryTypes.SELECT, bind: { limit: PURGE_BATCH } },
    );
    for (const job of expired) {
      await deleteOutputs(deps.blobs, job);
      await sequelize.query("UPDATE video_jobs SET outputs_purged_at = now() WHERE id = $id AND outputs_purged_at IS NULL", { bind: { id: job.id } });
    }
  }

  async function runOnce(): Promise<number> {
    lastSweep = Date.now();
    await sweep();
    const jobs = await claim(settings.concurrency - running.size);
    await Promise.all(jobs.map(start));
    return jobs.length;
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        if (Date.now() - lastSweep >= SWEEP_MS) {
          lastSweep = Date.now();
          await sweep();
        }
        for (const job of await claim(settings.concurrency - running.size)) void start(job);
      } catch (err) {
        log.warn({ err: (err as Error).message }, "video poller: database step failed; retrying");
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, settings.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    }
  }

  /** Extends the leases of the jobs this instance works on, submissions in the request path included. */
  const renewal = setInterval(
    () => {
      if (held.size === 0) return;
      sequelize
        .query(`UPDATE video_jobs SET lease_expires_at = now() + make_interval(secs => $lease) WHERE id = ANY($ids) AND lease_owner = $owner`, {
          bind: { lease: settings.leaseSeconds, owner, ids: [...held.keys()] },
        })
        .catch((err: unknown) => log.warn({ err: (err as Error).message }, "video job leases could not be renewed"));
    },
    Math.max(200, (settings.leaseSeconds * 1000) / 3),
  );
  renewal.unref();

  const looping = settings.pollMs > 0 ? loop() : Promise.resolve();

  return {
    owner,
    holding,
    runOnce,
    wake: () => wakeUp?.(),
    async stop() {
      stopping.abort();
      wakeUp?.();
      clearInterval(renewal);
      await looping;
      await Promise.allSettled(running);
      // Handed back now rather than when the leases lapse, so the next instance goes on at once.
      await sequelize
        .query("UPDATE video_jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $owner", { bind: { owner } })
        .catch((err: unknown) => log.warn({ err: (err as Error).message }, "video job leases could not be handed back; they lapse"));
    },
  };
}

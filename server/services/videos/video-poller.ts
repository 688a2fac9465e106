import { startLeasedWorker } from "../../platform/workers/leased-worker.js";
import { newLeaseOwner } from "../../platform/workers/lease-owner.js";
import type { Deps } from "../deps.js";
import { advanceJob, type Advancer } from "./video-advance.js";
import {
  claimJobs,
  jobLeaseOwners,
  jobsWithExpiredOutputs,
  markOutputsPurged,
  releaseJobLeases,
  renewJobLeases,
  type VideoJobRow,
} from "./video-store.js";
import { deleteOutputs } from "./video-outputs.js";
import { errorMessage } from "../../../wire/errors.js";

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

export function startVideoPoller(deps: Deps): VideoPoller {
  const { sequelize, log, blobs } = deps;
  const settings = deps.config.video;
  const owner = newLeaseOwner();
  const stopping = new AbortController();
  const advancer: Advancer = { deps, blobs, owner, settings, signal: stopping.signal };
  // Only the jobs being worked on are renewed: a lease left behind by a step that could not finish lapses.
  const held = new Map<string, number>();

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

  async function work(job: VideoJobRow): Promise<void> {
    await holding(job.id, () => advanceJob(advancer, job)).catch((err: unknown) => {
      // The database failed mid-step: the job's lease lapses and it is claimed again.
      log.warn({ job: job.id, err: errorMessage(err) }, "video job step could not be recorded; it will be retried");
    });
  }

  /** Deletes the stored outputs of jobs whose `expires_at` has passed; reads already refuse them. */
  async function sweep(): Promise<void> {
    for (const job of await jobsWithExpiredOutputs(sequelize, PURGE_BATCH)) {
      await deleteOutputs(blobs, job);
      await markOutputsPurged(sequelize, job.id);
    }
  }

  /** Extends the leases of the jobs this instance works on, submissions in the request path included. */
  async function renew(): Promise<void> {
    if (held.size === 0) return;
    await renewJobLeases(sequelize, owner, [...held.keys()], settings.leaseSeconds);
  }

  const worker = startLeasedWorker({
    name: "video poller",
    log,
    concurrency: settings.concurrency,
    pollMs: settings.pollMs,
    claim: (limit) => claimJobs(sequelize, owner, limit, settings.leaseSeconds),
    work,
    renew: { everyMs: Math.max(200, (settings.leaseSeconds * 1000) / 3), run: renew },
    // A crashed instance of this machine (this one before a restart, say) need not be waited for.
    releaseDead: {
      self: owner,
      owners: () => jobLeaseOwners(sequelize),
      release: (holder) => releaseJobLeases(sequelize, holder),
    },
    sweep,
    sweepEveryMs: SWEEP_MS,
  });

  return {
    owner,
    holding,
    runOnce: () => worker.runOnce(),
    wake: () => worker.wake(),
    async stop() {
      stopping.abort();
      await worker.stop();
      // Handed back now rather than when the leases lapse, so the next instance goes on at once.
      await releaseJobLeases(sequelize, owner).catch((err: unknown) =>
        log.warn({ err: errorMessage(err) }, "video job leases could not be handed back; they lapse"),
      );
    },
  };
}

import type { BlobStore } from "../../platform/storage/blob-store.js";
import { ConnectError } from "@connectrpc/connect";
import type { VideoPollerConfig } from "../../platform/config.js";
import { httpErrorOf, errorMessage } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { UpstreamError, isRetryable, toGatewayError } from "../../engine/index.js";
import type { UpstreamVideo } from "../../engine/providers/video-api.js";
import { videoCost } from "./video-cost.js";
import {
  handBackJob,
  recordAccepted,
  recordEnd,
  recordFailedStep,
  recordProgress,
  type StoredOutput,
  type VideoJobRow,
  type VideoJobStatus,
} from "./video-store.js";
import { copyOutputs } from "./video-outputs.js";
import { settleJob, type JobOutcome } from "./video-settlement.js";
import { jobPlan, jobTarget, submissionOf, type JobPlan, type JobTarget } from "./video-upstream.js";

/**
 * One step of a claimed job, the poller's unit of work:
 *
 * | job / provider                              | becomes                                           |
 * |---------------------------------------------|---------------------------------------------------|
 * | past its deadline                           | `expired` (provider job deleted, no cost)         |
 * | not at the provider yet (submission died)   | submitted again (same idempotency key)            |
 * | `queued` / `in_progress`                    | `pending` / `in_progress`, polled again later     |
 * | `completed`                                 | outputs copied to the blob store, billed, `completed` |
 * | `failed` / `cancelled`                      | `failed` (provider's reason) / `cancelled`, no cost |
 * | unreachable, 429, 5xx, timeout, cut download | unchanged, retried after a backoff                |
 * | refuses the job (400, 404, 422), key deleted | `failed` with the reason                          |
 *
 * Final states are billed first (video-settlement.ts, exactly once) and then written, fenced by
 * the lease; when the write finds the job taken over, the instance that holds it finishes it.
 */
export interface Advancer {
  deps: Deps;
  /** Where completed jobs' outputs are copied to. */
  blobs: BlobStore;
  owner: string;
  settings: VideoPollerConfig;
  /** Aborted when the instance stops: the job is handed back untouched. */
  signal: AbortSignal;
}

const MAX_BACKOFF_MS = 300_000;
const NO_COST = "0";

export async function advanceJob(ax: Advancer, job: VideoJobRow): Promise<void> {
  if (job.deadline_at.getTime() <= Date.now()) return expire(ax, job);
  let plan: JobPlan;
  try {
    plan = await jobPlan(ax.deps, job);
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    const { status, message } = httpErrorOf(err);
    return finish(ax, job, "failed", message, { status: "error", httpStatus: status, costUsd: NO_COST });
  }
  try {
    const handle = await jobTarget(ax.deps, plan.context, plan.endpoint);
    if (job.upstream_id === null) return await resubmit(ax, job, plan, handle);
    const video = await handle.api.status(handle.target, job.upstream_id, ax.signal);
    await record(ax, job, plan, handle, video);
  } catch (err) {
    await setBack(ax, job, plan, err);
  }
}

async function record(
  ax: Advancer,
  job: VideoJobRow,
  plan: JobPlan,
  handle: JobTarget,
  video: UpstreamVideo,
): Promise<void> {
  switch (video.state) {
    case "queued":
    case "in_progress":
      await progress(ax, job, video.state === "queued" ? "pending" : "in_progress");
      return;
    case "failed":
      return finish(ax, job, "failed", video.error ?? "The provider failed the job", {
        status: "error",
        httpStatus: 502,
        costUsd: NO_COST,
      });
    case "cancelled":
      return finish(ax, job, "cancelled", "The provider cancelled the job", {
        status: "cancelled",
        httpStatus: 499,
        costUsd: NO_COST,
      });
    case "completed": {
      const outputs = await copyOutputs(ax.blobs, handle, job, video.id, video.outputs, ax.signal);
      const cost = videoCost(plan.model, video.seconds ?? job.seconds, job.resolution);
      return finish(ax, job, "completed", null, { status: "success", httpStatus: 200, costUsd: cost }, outputs);
    }
  }
}

/** A job whose submission was cut short (its instance died): sent again under the same idempotency key. */
async function resubmit(ax: Advancer, job: VideoJobRow, plan: JobPlan, handle: JobTarget): Promise<void> {
  if (!job.request)
    return finish(ax, job, "failed", "The job's request was lost before the provider accepted it", {
      status: "error",
      httpStatus: 500,
      costUsd: NO_COST,
    });
  const video = await handle.api.create(handle.target, submissionOf(job.request, plan.endpoint, job.id), ax.signal);
  await acceptedBy(ax.deps, job.id, ax.owner, video, handle.isByok, ax.settings.pollMs);
}

/** Records the provider's acceptance of a job and hands the job to the poller. */
export async function acceptedBy(
  deps: Deps,
  jobId: string,
  owner: string,
  video: UpstreamVideo,
  isByok: boolean,
  pollMs: number,
): Promise<boolean> {
  // A job the provider finished at once is looked at right away.
  const wait = video.state === "queued" || video.state === "in_progress" ? pollMs / 1000 : 0;
  return recordAccepted(deps.sequelize, jobId, owner, {
    upstreamId: video.id,
    status: video.state === "queued" ? "pending" : "in_progress",
    isByok,
    waitSeconds: wait,
  });
}

async function progress(ax: Advancer, job: VideoJobRow, status: VideoJobStatus): Promise<void> {
  await recordProgress(ax.deps.sequelize, job.id, ax.owner, status, ax.settings.pollMs / 1000);
}

async function expire(ax: Advancer, job: VideoJobRow): Promise<void> {
  if (job.upstream_id !== null) await removeUpstream(ax, job, job.upstream_id);
  const message = `The job did not finish before its deadline (${job.deadline_at.toISOString()})`;
  await finish(ax, job, "expired", message, { status: "error", httpStatus: 524, costUsd: NO_COST });
}

/** Best effort: the provider's job is of no use any more; its own expiry removes it otherwise. */
async function removeUpstream(ax: Advancer, job: VideoJobRow, upstreamId: string): Promise<void> {
  try {
    const plan = await jobPlan(ax.deps, job);
    const handle = await jobTarget(ax.deps, plan.context, plan.endpoint);
    await handle.api.remove(handle.target, upstreamId, ax.signal);
  } catch (err) {
    ax.deps.log.warn(
      { job: job.id, err: errorMessage(err) },
      "the provider's copy of an expired video job could not be deleted",
    );
  }
}

async function finish(
  ax: Advancer,
  job: VideoJobRow,
  status: VideoJobStatus,
  error: string | null,
  outcome: JobOutcome,
  outputs?: StoredOutput[],
): Promise<void> {
  await settleJob(ax.deps.sequelize, job, outcome);
  await recordEnd(ax.deps.sequelize, job.id, ax.owner, {
    status,
    error,
    costUsd: outcome.costUsd,
    ...(outputs ? { outputs: { stored: outputs, retentionSeconds: ax.settings.retentionSeconds } } : {}),
  });
}

/**
 * A step that did not get through. The provider refusing the job for good fails it; anything that
 * may pass (provider unreachable or busy, our database or blob store) is tried again after a
 * backoff: the base doubled per consecutive failure, at least the provider's Retry-After.
 */
async function setBack(ax: Advancer, job: VideoJobRow, plan: JobPlan, err: unknown): Promise<void> {
  const { sequelize, log } = ax.deps;
  if (ax.signal.aborted) {
    await handBackJob(sequelize, job.id, ax.owner);
    return;
  }
  // A download that broke off is worth another try, unlike a stream cut in front of a client.
  if (err instanceof UpstreamError && err.failure !== "cut" && !isRetryable(err)) {
    const { status, message } = httpErrorOf(toGatewayError(err, plan.endpoint.providerName));
    return finish(ax, job, "failed", message, { status: "error", httpStatus: status, costUsd: NO_COST });
  }
  if (!(err instanceof UpstreamError))
    log.warn({ job: job.id, err: errorMessage(err) }, "video job step failed; it will be retried");
  const retryAfterMs = err instanceof UpstreamError ? (err.options.retryAfterS ?? 0) * 1000 : 0;
  const delayMs = Math.min(
    MAX_BACKOFF_MS,
    Math.max(retryAfterMs, ax.settings.retryBaseMs * 2 ** Math.min(job.failures, 16)),
  );
  await recordFailedStep(sequelize, job.id, ax.owner, delayMs / 1000);
}

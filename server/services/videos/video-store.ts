import { QueryTypes, type Sequelize } from "sequelize";
import type { VideoRequestSpec } from "./video-request.js";

/**
 * The `video_jobs` table (migration 0007): every statement on it. Every change a worker makes to an
 * open job is fenced by its lease: it applies only while `lease_owner` is still the worker's and
 * the job still open, so an instance that lost a job to another (after a stall) cannot overwrite
 * what the other did.
 */
export type VideoJobStatus = "pending" | "in_progress" | "completed" | "failed" | "cancelled" | "expired";

export const OPEN: readonly VideoJobStatus[] = ["pending", "in_progress"];

/** What is sent to the provider, kept until the provider has accepted the job. */
export type StoredRequest = VideoRequestSpec & { continues: string | undefined };

export interface StoredOutput {
  content_type: string;
  size: number;
}

export interface VideoJobRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  key_hash: string;
  member_user_id: string | null;
  model_id: string;
  endpoint_id: string;
  provider_slug: string;
  previous_job_id: string | null;
  status: VideoJobStatus;
  request: StoredRequest | null;
  upstream_id: string | null;
  generation_id: string;
  seconds: number;
  resolution: string | null;
  error: string | null;
  estimate_usd: string;
  reservation_id: string | null;
  cost_usd: string | null;
  is_byok: boolean;
  outputs: StoredOutput[];
  outputs_expire_at: Date | null;
  outputs_purged_at: Date | null;
  created_at: Date;
  finished_at: Date | null;
  deadline_at: Date;
  failures: number;
  available_at: Date;
  lease_owner: string | null;
  lease_expires_at: Date | null;
}

export interface Scope {
  organizationId: string;
  workspaceId: string;
}

/** A job of the scope; without a scope any job (signed URLs carry their own authority). */
export async function findJob(sequelize: Sequelize, id: string, scope: Scope | null): Promise<VideoJobRow | undefined> {
  const [row] = await sequelize.query<VideoJobRow>(
    `SELECT * FROM video_jobs
      WHERE id = :id ${scope ? "AND organization_id = :organizationId AND workspace_id = :workspaceId" : ""}`,
    {
      type: QueryTypes.SELECT,
      replacements: { id, organizationId: scope?.organizationId ?? null, workspaceId: scope?.workspaceId ?? null },
    },
  );
  return row;
}

/** A job's stored outputs are readable until `outputs_expire_at`, whether or not the sweep has run. */
export function outputsAvailable(job: VideoJobRow, now = Date.now()): boolean {
  return (
    job.status === "completed" &&
    job.outputs_purged_at === null &&
    job.outputs_expire_at !== null &&
    job.outputs_expire_at.getTime() > now
  );
}

/**
 * Applies `set` to an open job this worker holds and releases the lease; false when the job is no
 * longer the worker's (another instance took it over or finished it).
 */
async function updateHeld(
  sequelize: Sequelize,
  id: string,
  owner: string,
  set: string,
  bind: Record<string, unknown> = {},
): Promise<boolean> {
  const rows = await sequelize.query<{ id: string }>(
    `UPDATE video_jobs SET ${set}, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = $id AND lease_owner = $owner AND status IN ('pending', 'in_progress') RETURNING id`,
    { type: QueryTypes.SELECT, bind: { ...bind, id, owner } },
  );
  return rows.length > 0;
}

/** The provider accepted the job (`upstreamId`); the poller looks at it again in `waitSeconds`. */
export function recordAccepted(
  sequelize: Sequelize,
  id: string,
  owner: string,
  accepted: { upstreamId: string; status: VideoJobStatus; isByok: boolean; waitSeconds: number },
): Promise<boolean> {
  return updateHeld(
    sequelize,
    id,
    owner,
    "upstream_id = $upstream, status = $status, request = NULL, is_byok = $byok, " +
      "failures = 0, available_at = now() + make_interval(secs => $wait)",
    {
      upstream: accepted.upstreamId,
      status: accepted.status,
      byok: accepted.isByok,
      wait: accepted.waitSeconds,
    },
  );
}

/** The provider is still at work: polled again in `waitSeconds`. */
export async function recordProgress(
  sequelize: Sequelize,
  id: string,
  owner: string,
  status: VideoJobStatus,
  waitSeconds: number,
): Promise<void> {
  await updateHeld(
    sequelize,
    id,
    owner,
    "status = $status, failures = 0, available_at = now() + make_interval(secs => $wait)",
    { status, wait: waitSeconds },
  );
}

/** The job's final state; a completed job's stored outputs are kept `retentionSeconds`. */
export async function recordEnd(
  sequelize: Sequelize,
  id: string,
  owner: string,
  end: {
    status: VideoJobStatus;
    error: string | null;
    costUsd: string;
    outputs?: { stored: StoredOutput[]; retentionSeconds: number };
  },
): Promise<void> {
  const outputs = end.outputs
    ? ", outputs = $outputs::jsonb, outputs_expire_at = now() + make_interval(secs => $retention)"
    : "";
  await updateHeld(
    sequelize,
    id,
    owner,
    `status = $status, error = $error, cost_usd = $cost, request = NULL, finished_at = now()${outputs}`,
    {
      status: end.status,
      error: end.error,
      cost: end.costUsd,
      ...(end.outputs ? { outputs: JSON.stringify(end.outputs.stored), retention: end.outputs.retentionSeconds } : {}),
    },
  );
}

/** Handed back untouched (the instance stops): due again at once. */
export async function handBackJob(sequelize: Sequelize, id: string, owner: string): Promise<void> {
  await updateHeld(sequelize, id, owner, "available_at = now()");
}

/** A step that did not get through: one failure more, tried again in `delaySeconds`. */
export async function recordFailedStep(
  sequelize: Sequelize,
  id: string,
  owner: string,
  delaySeconds: number,
): Promise<void> {
  await updateHeld(
    sequelize,
    id,
    owner,
    "failures = failures + 1, available_at = now() + make_interval(secs => $delay)",
    { delay: delaySeconds },
  );
}

/** A new job, held under `owner`'s lease while the provider is asked (migration 0007's columns). */
export interface NewVideoJob {
  id: string;
  organizationId: string;
  workspaceId: string;
  keyHash: string;
  memberUserId: string | null;
  modelId: string;
  endpointId: string;
  providerSlug: string;
  previousJobId: string | null;
  request: StoredRequest;
  generationId: string;
  estimate: string;
  reservationId: string | null;
  deadlineSeconds: number;
  owner: string;
  leaseSeconds: number;
}

export async function insertJob(sequelize: Sequelize, job: NewVideoJob): Promise<VideoJobRow> {
  const [row] = await sequelize.query<VideoJobRow>(
    `INSERT INTO video_jobs (id, organization_id, workspace_id, key_hash, member_user_id, model_id, endpoint_id,
                             provider_slug, previous_job_id, status, request, generation_id, seconds, resolution,
                             estimate_usd, reservation_id, deadline_at, lease_owner, lease_expires_at)
     VALUES ($id, $organizationId, $workspaceId, $keyHash, $memberUserId, $modelId, $endpointId, $providerSlug,
             $previousJobId, 'pending', $request::jsonb, $generationId, $seconds, $resolution, $estimate,
             $reservationId, now() + make_interval(secs => $deadline), $owner, now() + make_interval(secs => $lease))
     RETURNING *`,
    {
      type: QueryTypes.SELECT,
      bind: {
        id: job.id,
        organizationId: job.organizationId,
        workspaceId: job.workspaceId,
        keyHash: job.keyHash,
        memberUserId: job.memberUserId,
        modelId: job.modelId,
        endpointId: job.endpointId,
        providerSlug: job.providerSlug,
        previousJobId: job.previousJobId,
        request: JSON.stringify(job.request),
        generationId: job.generationId,
        seconds: job.request.seconds,
        resolution: job.request.resolution ?? null,
        estimate: job.estimate,
        reservationId: job.reservationId,
        deadline: job.deadlineSeconds,
        owner: job.owner,
        lease: job.leaseSeconds,
      },
    },
  );
  return row!;
}

/** The job goes to the model's next endpoint (the one before did not take it). */
export async function moveJobToEndpoint(
  sequelize: Sequelize,
  id: string,
  endpoint: { id: string; providerSlug: string },
): Promise<void> {
  await sequelize.query(
    "UPDATE video_jobs SET endpoint_id = $endpointId, provider_slug = $providerSlug WHERE id = $id",
    {
      bind: { id, endpointId: endpoint.id, providerSlug: endpoint.providerSlug },
    },
  );
}

/** Removes a job no provider accepted; false when a provider did (the job then stays). */
export async function deleteUnacceptedJob(sequelize: Sequelize, id: string): Promise<boolean> {
  const deleted = await sequelize.query("DELETE FROM video_jobs WHERE id = $id AND upstream_id IS NULL RETURNING id", {
    type: QueryTypes.SELECT,
    bind: { id },
  });
  return deleted.length > 0;
}

/** Due jobs (`available_at` reached, or past their deadline) whose lease is free or lapsed, now leased to `owner`. */
export async function claimJobs(
  sequelize: Sequelize,
  owner: string,
  limit: number,
  leaseSeconds: number,
): Promise<VideoJobRow[]> {
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
    { type: QueryTypes.SELECT, bind: { limit, owner, lease: leaseSeconds } },
  );
}

/** Extends `owner`'s leases on these jobs. */
export async function renewJobLeases(
  sequelize: Sequelize,
  owner: string,
  ids: string[],
  leaseSeconds: number,
): Promise<void> {
  await sequelize.query(
    `UPDATE video_jobs SET lease_expires_at = now() + make_interval(secs => $lease)
      WHERE id = ANY($ids) AND lease_owner = $owner`,
    {
      bind: { lease: leaseSeconds, owner, ids },
    },
  );
}

/** Gives `owner`'s jobs back at once: the next claim of any instance takes them. */
export async function releaseJobLeases(sequelize: Sequelize, owner: string): Promise<void> {
  await sequelize.query(
    "UPDATE video_jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $owner",
    { bind: { owner } },
  );
}

/** Who holds leases on open jobs now. */
export async function jobLeaseOwners(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ owner: string }>(
    "SELECT DISTINCT lease_owner AS owner FROM video_jobs " +
      "WHERE status IN ('pending', 'in_progress') AND lease_owner IS NOT NULL",
    {
      type: QueryTypes.SELECT,
    },
  );
  return rows.map((row) => row.owner);
}

/** Up to `limit` jobs whose stored outputs' retention has passed and that still have them. */
export function jobsWithExpiredOutputs(
  sequelize: Sequelize,
  limit: number,
): Promise<Pick<VideoJobRow, "id" | "workspace_id" | "outputs">[]> {
  return sequelize.query<Pick<VideoJobRow, "id" | "workspace_id" | "outputs">>(
    `SELECT id, workspace_id, outputs FROM video_jobs
      WHERE outputs_expire_at <= now() AND outputs_purged_at IS NULL
      ORDER BY outputs_expire_at LIMIT $limit`,
    { type: QueryTypes.SELECT, bind: { limit } },
  );
}

export async function markOutputsPurged(sequelize: Sequelize, id: string): Promise<void> {
  await sequelize.query(
    "UPDATE video_jobs SET outputs_purged_at = now() WHERE id = $id AND outputs_purged_at IS NULL",
    { bind: { id } },
  );
}

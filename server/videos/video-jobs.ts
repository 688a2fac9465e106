import { QueryTypes, type Sequelize } from "sequelize";
import type { VideoRequestSpec } from "./video-request.js";

/**
 * The `video_jobs` table (migration 0007). Every change a worker makes to an open job is fenced by
 * its lease: it applies only while `lease_owner` is still the worker's and the job still open, so
 * an instance that lost a job to another (after a stall) cannot overwrite what the other did.
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
    `SELECT * FROM video_jobs WHERE id = :id ${scope ? "AND organization_id = :organizationId AND workspace_id = :workspaceId" : ""}`,
    { type: QueryTypes.SELECT, replacements: { id, organizationId: scope?.organizationId ?? null, workspaceId: scope?.workspaceId ?? null } },
  );
  return row;
}

/** A job's stored outputs are readable until `outputs_expire_at`, whether or not the sweep has run. */
export function outputsAvailable(job: VideoJobRow, now = Date.now()): boolean {
  return job.status === "completed" && job.outputs_purged_at === null && job.outputs_expire_at !== null && job.outputs_expire_at.getTime() > now;
}

/**
 * Applies `set` to an open job this worker holds and releases the lease (unless `keepLease`);
 * false when the job is no longer the worker's (another instance took it over or finished it).
 */
export async function updateHeld(
  sequelize: Sequelize,
  id: string,
  owner: string,
  set: string,
  bind: Record<string, unknown> = {},
  options: { keepLease?: boolean } = {},
): Promise<boolean> {
  const release = options.keepLease ? "" : ", lease_owner = NULL, lease_expires_at = NULL";
  const rows = await sequelize.query<{ id: string }>(
    `UPDATE video_jobs SET ${set}${release} WHERE id = $id AND lease_owner = $owner AND status IN ('pending', 'in_progress') RETURNING id`,
    { type: QueryTypes.SELECT, bind: { ...bind, id, owner } },
  );
  return rows.length > 0;
}

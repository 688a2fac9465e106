import type { Sequelize } from "sequelize";
import { compareDecimals, settleCall } from "../../engine/index.js";
import type { VideoJobRow } from "./video-store.js";

/**
 * Bills a job that has reached its end: one usage_ledger row (`api = 'video'`, the job's
 * `generation_id`) with its cost, the spend counters, and the release of the budget reservation
 * made at submission, in one statement (usage-store.ts). The ledger's unique index on video
 * generation ids is the fence: a second settlement of the same job (another instance that took
 * the job over, or a retry after the job's own update failed) fails as a whole and counts as done,
 * so a job is billed exactly once. Failed, cancelled and expired jobs get a row too, at no cost,
 * which releases their reservation.
 */
export interface JobOutcome {
  status: "success" | "error" | "cancelled";
  httpStatus: number;
  costUsd: string;
}

const FENCE = "usage_ledger_one_per_video_job";

export async function settleJob(
  sequelize: Sequelize,
  job: VideoJobRow,
  outcome: JobOutcome,
  now = new Date(),
): Promise<void> {
  try {
    await settleCall(
      sequelize,
      {
        generationId: job.generation_id,
        organizationId: job.organization_id,
        keyHash: job.key_hash,
        workspaceId: job.workspace_id,
        memberUserId: job.member_user_id,
        endUser: null,
        sessionId: null,
        api: "video",
        modelId: job.model_id,
        providerSlug: job.provider_slug,
        endpointId: job.endpoint_id,
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        streamed: false,
        promptTokens: 0,
        completionTokens: 0,
        reasoningTokens: 0,
        cachedTokens: 0,
        costUsd: outcome.costUsd,
        isByok: job.is_byok,
        isFree: compareDecimals(job.estimate_usd, "0") === 0,
        latencyMs: null,
        generationMs: now.getTime() - job.created_at.getTime(),
        reservationId: job.reservation_id,
      },
      now,
    );
  } catch (err) {
    if (!alreadySettled(err)) throw err;
  }
}

function alreadySettled(err: unknown): boolean {
  const parent =
    typeof err === "object" && err !== null && "parent" in err ? (err as { parent: unknown }).parent : undefined;
  return typeof parent === "object" && parent !== null && (parent as { constraint?: unknown }).constraint === FENCE;
}

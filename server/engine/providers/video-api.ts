import type { JsonObject } from "@bufbuild/protobuf";
import type { UpstreamTarget } from "./provider.js";

/**
 * A provider's asynchronous video generation API, in provider-neutral terms: create a job (or
 * continue an earlier one), read its state, fetch an output's bytes, delete it. The gateway's own
 * job lifecycle (server/services/videos) is built on these calls only. Every method throws UpstreamError
 * (provider.ts) on failure.
 */
export interface VideoSubmission {
  prompt: string | undefined;
  /** Seconds: the request's duration or the model's default. */
  seconds: number;
  /** `WIDTHxHEIGHT`, when the request named one (or it follows from resolution and aspect ratio). */
  size: string | undefined;
  resolution: string | undefined;
  aspectRatio: string | undefined;
  seed: number | undefined;
  generateAudio: boolean | undefined;
  firstFrameUrl: string | undefined;
  lastFrameUrl: string | undefined;
  referenceUrls: string[];
  /** Provider-specific parameters the model allows (`provider.options.<slug>.parameters`). */
  parameters: JsonObject;
  /** Continue this provider-side job instead of starting from nothing (`previous_job_id`). */
  continues: string | undefined;
  /** The gateway's job id: sent as the idempotency key, so a repeated submission is one job. */
  idempotencyKey: string;
}

export type UpstreamVideoState = "queued" | "in_progress" | "completed" | "failed" | "cancelled";

export interface UpstreamVideo {
  id: string;
  state: UpstreamVideoState;
  /** Why the provider failed the job (scrubbed of credentials). */
  error?: string;
  /** Seconds the provider reports it generated, when it says. */
  seconds?: number;
  /** How many outputs a completed job has. */
  outputs: number;
}

export interface VideoOutput {
  contentType: string;
  /** The bytes as they arrive; a break throws UpstreamError `cut`. */
  body: AsyncIterable<Uint8Array>;
}

export interface VideoApi {
  create(target: UpstreamTarget, submission: VideoSubmission, signal: AbortSignal): Promise<UpstreamVideo>;
  status(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<UpstreamVideo>;
  content(target: UpstreamTarget, upstreamId: string, index: number, signal: AbortSignal): Promise<VideoOutput>;
  /** Deletes the provider-side job and its assets (an expired job); a missing job is no error. */
  remove(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<void>;
}

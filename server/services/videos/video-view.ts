/**
 * A job as the API's video job (docs/api/videos.md). `generation_id` appears once the job is billed (every
 * final status); `expires_at`, the content URLs and the signed URLs only while the stored outputs
 * are available (null, or empty for `unsigned_urls`, before completion and after retention);
 * `usage` once completed. Signed URLs are computed here on every read and nowhere kept.
 *
 * @module
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { VideoStatusSchema, type VideoJobSchema, type VideoModelSchema } from "../../../gen/gateway/v1/videos_pb.js";
import type { CatalogVideoModel } from "../../engine/catalog/video-models.js";
import { usdNumber } from "../../engine/index.js";
import { enumFromStored } from "../../../wire/enums.js";
import { OPEN, outputsAvailable, type VideoJobRow } from "./video-store.js";
import { contentPath, type UrlSigner } from "./video-url-signing.js";

type VideoJobInit = MessageInitShape<typeof VideoJobSchema>;

export function toVideoJob(job: VideoJobRow, signer: UrlSigner): VideoJobInit {
  const stored = outputsAvailable(job);
  const expiresAt = stored ? Math.floor(job.outputs_expire_at!.getTime() / 1000) : undefined;
  const indexes = stored ? job.outputs.map((_, index) => index) : [];
  return {
    id: job.id,
    status: enumFromStored(VideoStatusSchema, job.status),
    pollingUrl: `/api/v1/videos/${encodeURIComponent(job.id)}`,
    generationId: OPEN.includes(job.status) ? undefined : job.generation_id,
    expiresAt: expiresAt === undefined ? undefined : BigInt(expiresAt),
    unsignedUrls: indexes.map((index) => `${contentPath(job.id)}?index=${index}`),
    urls: expiresAt === undefined ? [] : indexes.map((index) => signer.url(job.id, index, expiresAt)),
    usage: job.status === "completed" ? { cost: usdNumber(job.cost_usd ?? "0"), isByok: job.is_byok } : undefined,
    error: job.error ?? undefined,
  };
}

type VideoModelInit = MessageInitShape<typeof VideoModelSchema>;

export function toVideoModel(model: CatalogVideoModel): VideoModelInit {
  return {
    id: model.id,
    canonicalSlug: model.canonicalSlug,
    name: model.name,
    description: model.description,
    created: BigInt(model.created),
    generateAudio: model.generateAudio,
    seed: model.seed ?? undefined,
    pricingSkus: Object.fromEntries(model.pricingSkus),
    supportedAspectRatios: model.supportedAspectRatios,
    supportedDurations: model.supportedDurations,
    supportedFrameImages: model.supportedFrameImages,
    supportedResolutions: model.supportedResolutions,
    supportedSizes: model.supportedSizes ?? [],
    allowedPassthroughParameters: model.allowedPassthroughParameters,
  };
}

import type { ServiceImpl } from "@connectrpc/connect";
import type { VideosService } from "../../../gen/gateway/v1/videos_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { findJob, outputsAvailable, type VideoJobRow } from "./video-store.js";
import { readOutput } from "./video-outputs.js";
import type { VideoPoller } from "./video-poller.js";
import { submitVideo } from "./video-submission.js";
import { createUrlSigner } from "./video-url-signing.js";
import { toVideoJob, toVideoModel } from "./video-view.js";

/**
 * Video jobs of the caller's workspace (another workspace's job is a 404) and the video model
 * list. POST submits (video-submission.ts) and the poller (video-poller.ts) advances; GET only
 * reads. Content is served from the gateway's stored copy, to the API key of the job's workspace
 * or to a valid signed URL (video-url-signing.ts): a missing, malformed, wrong or expired
 * signature is a 401 like a missing or invalid key.
 */
export function videosService(deps: Deps, poller: VideoPoller): ServiceImpl<typeof VideosService> {
  const { sequelize, secrets, blobs } = deps;
  const { catalog } = deps.engine;
  const signer = createUrlSigner(secrets.masterKey);

  async function visible(
    jobId: string,
    scope: { organizationId: string; workspaceId: string } | null,
  ): Promise<VideoJobRow> {
    const job = await findJob(sequelize, jobId, scope);
    if (!job) throw gatewayError(404, `Video job ${jobId} not found`);
    return job;
  }

  return {
    async createVideo(req, ctx) {
      return toVideoJob(await submitVideo(deps, poller, ctx, req), signer);
    },

    async getVideo(req, ctx) {
      return toVideoJob(await visible(req.jobId, callerOf(ctx).key), signer);
    },

    async getVideoContent(req, ctx) {
      const index = req.index ?? 0;
      let job: VideoJobRow;
      if (req.sig !== undefined || req.expires !== undefined) {
        if (req.sig === undefined || req.expires === undefined)
          throw gatewayError(401, "A signed URL carries both expires and sig");
        if (!signer.verify(req.jobId, index, req.expires, req.sig))
          throw gatewayError(401, "Invalid signature: this is not a download URL the gateway issued");
        if (req.expires <= BigInt(Math.floor(Date.now() / 1000)))
          throw gatewayError(401, `The signed URL expired at ${new Date(Number(req.expires) * 1000).toISOString()}`);
        job = await visible(req.jobId, null);
      } else {
        job = await visible(req.jobId, callerOf(ctx).key);
      }
      if (job.status !== "completed")
        throw gatewayError(409, `Video job ${job.id} is ${job.status}; its content is available once it has completed`);
      if (!outputsAvailable(job))
        throw gatewayError(
          410,
          `The stored outputs of video job ${job.id} have expired: they are kept for a limited time after completion`,
        );
      const output = job.outputs[index];
      if (!output)
        throw gatewayError(
          404,
          `Video job ${job.id} has ${job.outputs.length} output(s); index ${index} does not exist`,
        );
      const stream = await readOutput(blobs, job, index);
      if (!stream) throw gatewayError(410, `The stored output ${index} of video job ${job.id} is no longer available`);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return { contentType: output.content_type, data: Buffer.concat(chunks) };
    },

    async listVideoModels() {
      return { data: [...catalog.videoModels.values()].map(toVideoModel) };
    },
  };
}

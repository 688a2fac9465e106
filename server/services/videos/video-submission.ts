import type { HandlerContext } from "@connectrpc/connect";
import type { CreateVideoRequest } from "../../../gen/gateway/v1/videos_pb.js";
import {
  UpstreamError,
  findVideoModel,
  isFreeEndpoint,
  isServed,
  providerFor,
  releaseReservation,
  toGatewayError,
} from "../../engine/index.js";
import type { CatalogEndpoint } from "../../engine/catalog/catalog.js";
import type { CatalogVideoModel } from "../../engine/catalog/video-models.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError, errorMessage } from "../../../wire/errors.js";
import type { CallerContext } from "../../engine/inference/caller-context.js";
import type { Deps } from "../deps.js";
import { acceptedBy } from "./video-advance.js";
import { videoCost } from "./video-cost.js";
import { newGenerationId, newJobId } from "./video-ids.js";
import {
  deleteUnacceptedJob,
  findJob,
  insertJob,
  moveJobToEndpoint,
  type StoredRequest,
  type VideoJobRow,
} from "./video-store.js";
import type { VideoPoller } from "./video-poller.js";
import { videoRequestSpec } from "./video-request.js";
import { submissionOf } from "./video-upstream.js";

/**
 * POST /videos: governance as for chat (the model's capabilities, guardrails and regional hostname
 * 403, the rate limit 429, the cost reserved against every budget 402), then the job is written
 * and handed to the provider before the answer, so a provider that refuses the request is the
 * caller's error at once (with fallback to the model's next endpoint when one is unavailable).
 * The job row comes first and is held under the poller's lease while the provider is called: if
 * this instance dies meanwhile, the poller of another sends it again under the same idempotency
 * key. A request no endpoint accepted leaves nothing behind.
 */
export async function submitVideo(
  deps: Deps,
  poller: VideoPoller,
  ctx: HandlerContext,
  req: CreateVideoRequest,
): Promise<VideoJobRow> {
  const caller = callerOf(ctx);
  const context = await deps.engine.callerContext(caller);
  const model = findVideoModel(deps.engine.catalog.videoModels, req.model);
  if (!model)
    throw gatewayError(
      400,
      `model: ${req.model} is not a video model of this gateway (GET /api/v1/videos/models lists them)`,
    );
  const previous =
    req.previousJobId === undefined ? undefined : await findJob(deps.sequelize, req.previousJobId, caller.key);
  if (req.previousJobId !== undefined && !previous)
    throw gatewayError(404, `previous_job_id: video job ${req.previousJobId} not found`);
  const spec = videoRequestSpec(
    model,
    req,
    previous && { id: previous.id, modelId: previous.model_id, status: previous.status },
  );
  // The provider-side video a continuation extends exists on the earlier job's endpoint only.
  const candidates = previous ? model.endpoints.filter((e) => e.id === previous.endpoint_id) : model.endpoints;
  if (candidates.length === 0)
    throw gatewayError(400, `previous_job_id: the endpoint of job ${previous?.id} is no longer configured`);
  const refusal = deps.engine.refusalFor(context, ctx.requestHeader.get("x-forwarded-host"));
  const endpoints = candidates.filter((endpoint) => refusal(endpoint) === undefined);
  if (endpoints.length === 0) throw gatewayError(403, `Not allowed: ${refusal(candidates[0]!)}`);

  // The cost is known in advance: it is reserved until the job's settlement, at the latest its deadline.
  const estimate = videoCost(model, spec.seconds, spec.resolution ?? null);
  const { reservationId } = await deps.engine.reserve(context, {
    estimateUsd: estimate,
    free: endpoints.every(isFreeEndpoint),
    reservationTtlS: deps.config.video.deadlineSeconds,
  });
  const request: StoredRequest = { ...spec, continues: previous?.upstream_id ?? undefined };
  let job: VideoJobRow;
  try {
    job = await newJob(deps, poller, context, model, endpoints[0]!, {
      request,
      estimate,
      reservationId,
      previousJobId: previous?.id ?? null,
    });
  } catch (err) {
    if (reservationId) await releaseReservation(deps.sequelize, reservationId).catch(() => undefined);
    throw err;
  }
  return poller.holding(job.id, async () => {
    try {
      return await handOver(deps, poller, context, job, endpoints);
    } catch (err) {
      await discard(deps, job);
      throw err;
    }
  });
}

interface NewJob {
  request: StoredRequest;
  estimate: string;
  reservationId: string | null;
  previousJobId: string | null;
}

function newJob(
  deps: Deps,
  poller: VideoPoller,
  context: CallerContext,
  model: CatalogVideoModel,
  endpoint: CatalogEndpoint,
  job: NewJob,
): Promise<VideoJobRow> {
  const { sequelize, config } = deps;
  const { key } = context.caller;
  return insertJob(sequelize, {
    id: newJobId(),
    organizationId: key.organizationId,
    workspaceId: key.workspaceId,
    keyHash: key.hash,
    memberUserId: key.creatorUserId,
    modelId: model.id,
    endpointId: endpoint.id,
    providerSlug: endpoint.providerSlug,
    previousJobId: job.previousJobId,
    request: job.request,
    generationId: newGenerationId(),
    estimate: job.estimate,
    reservationId: job.reservationId,
    deadlineSeconds: config.video.deadlineSeconds,
    owner: poller.owner,
    // Held long enough for the provider's answer; the poller renews it meanwhile.
    leaseSeconds: config.video.leaseSeconds + Math.ceil(config.requestTimeoutMs / 1000),
  });
}

/** Tries the endpoints in order until one accepts the job; the last failure is the caller's error. */
async function handOver(
  deps: Deps,
  poller: VideoPoller,
  context: CallerContext,
  job: VideoJobRow,
  endpoints: CatalogEndpoint[],
): Promise<VideoJobRow> {
  const { sequelize, config } = deps;
  // Not the client's signal: a job the provider accepted stands even if the client went away.
  const signal = AbortSignal.timeout(config.requestTimeoutMs);
  let jobEndpoint = endpoints[0]!;
  const outcome = await deps.engine.tryEndpoints(
    context,
    endpoints.map((endpoint) => ({ endpoint })),
    async (target, { endpoint }) => {
      const api = providerFor(target.kind).video;
      if (!api) throw new UpstreamError("unsupported", `provider ${endpoint.providerSlug} has no video API`);
      return api.create(target, submissionOf(job.request!, endpoint, job.id), signal);
    },
    {
      // No key choice: the poller finds the job's key again without one (the pool's first).
      keyChoice: undefined,
      signal,
      async sending({ endpoint }) {
        if (endpoint === jobEndpoint) return;
        await moveJobToEndpoint(sequelize, job.id, endpoint);
        jobEndpoint = endpoint;
      },
    },
  );
  if (outcome === undefined) throw gatewayError(502, "No endpoint could serve the request");
  if (!isServed(outcome)) {
    const { error, attempt } = outcome;
    throw error instanceof UpstreamError ? toGatewayError(error, attempt.endpoint.providerName) : error;
  }
  await acceptedBy(deps, job.id, poller.owner, outcome.value, outcome.isByok, config.video.pollMs);
  poller.wake();
  return (await findJob(sequelize, job.id, null))!;
}

/** Nothing was sent, or the provider refused: the job never existed, and nothing stays reserved. */
async function discard(deps: Deps, job: VideoJobRow): Promise<void> {
  const { sequelize, log } = deps;
  try {
    // A job the provider did accept (the failure came after) stays, and keeps what it holds.
    if ((await deleteUnacceptedJob(sequelize, job.id)) && job.reservation_id)
      await releaseReservation(sequelize, job.reservation_id);
  } catch (err) {
    // The lease lapses and the poller submits the job again; its reservation lapses with its deadline.
    log.warn({ job: job.id, err: errorMessage(err) }, "a video job the provider did not accept could not be removed");
  }
}

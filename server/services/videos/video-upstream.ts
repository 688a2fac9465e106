import type { CatalogEndpoint } from "../../engine/catalog/catalog.js";
import { UpstreamError, findVideoModel, providerFor } from "../../engine/index.js";
import type { CatalogVideoModel } from "../../engine/catalog/video-models.js";
import { gatewayError } from "../../../wire/errors.js";
import type { CallerContext } from "../../engine/inference/caller-context.js";
import type { Deps } from "../deps.js";
import type { UpstreamTarget } from "../../engine/providers/provider.js";
import type { VideoApi, VideoSubmission } from "../../engine/providers/video-api.js";
import type { StoredRequest, VideoJobRow } from "./video-store.js";

/**
 * Where a job's provider calls go: the endpoint's provider with the gateway's key, or the
 * workspace's own (BYOK) key, resolved as for chat (engine/inference/upstream-targets.ts).
 */
export interface JobTarget {
  api: VideoApi;
  target: UpstreamTarget;
  isByok: boolean;
}

export async function jobTarget(deps: Deps, context: CallerContext, endpoint: CatalogEndpoint): Promise<JobTarget> {
  const resolved = await deps.engine.resolveTarget(context, endpoint);
  const api = providerFor(resolved.target.kind).video;
  if (!api) throw new UpstreamError("unsupported", `provider ${endpoint.providerSlug} has no video API`);
  return { api, target: resolved.target, isByok: resolved.isByok };
}

/** What the poller needs to call a job's provider again; a ConnectError when the job cannot go on. */
export interface JobPlan {
  context: CallerContext;
  model: CatalogVideoModel;
  endpoint: CatalogEndpoint;
}

export async function jobPlan(deps: Deps, job: VideoJobRow): Promise<JobPlan> {
  const { governance, catalog } = deps.engine;
  const caller = await governance.caller(job.key_hash);
  if (!caller) throw gatewayError(401, "The API key that submitted the job has been deleted");
  const model = findVideoModel(catalog.videoModels, job.model_id);
  const endpoint = model?.endpoints.find((e) => e.id === job.endpoint_id);
  if (!model || !endpoint) throw gatewayError(400, `Endpoint ${job.endpoint_id} is no longer configured`);
  return { context: await deps.engine.callerContext(caller), model, endpoint };
}

/** The provider's part of a stored request: only the serving provider's passthrough parameters. */
export function submissionOf(request: StoredRequest, endpoint: CatalogEndpoint, jobId: string): VideoSubmission {
  const { passthrough, resolution, ...rest } = request;
  return { ...rest, resolution, parameters: passthrough[endpoint.providerSlug] ?? {}, idempotencyKey: jobId };
}

import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { ProviderPreferencesSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { gatewayError, httpErrorOf } from "../../../wire/errors.js";
import type { CallerContext } from "../../engine/inference/caller-context.js";
import type { InferenceRuntime } from "../../engine/inference/inference-runtime.js";
import { planRoute, type Attempt, type InferenceApi } from "../../engine/inference/routing.js";

/**
 * A batch's route under its key's governance, as a live call would get it: planned at submission
 * and again while the batch runs (so a guardrail changed meanwhile applies to the items not yet
 * run). Policy refusals stay 403; any other reason the model cannot serve the batch (unknown,
 * wrong output modality, no provider left after `provider.only`) is the API's 400.
 */
export async function batchRoute(
  runtime: InferenceRuntime,
  context: CallerContext,
  batch: { api: InferenceApi; model: string; only: string[] },
): Promise<Attempt[]> {
  try {
    return await planRoute({
      catalog: runtime.catalog,
      modelIds: [batch.model],
      api: batch.api,
      preferences: batch.only.length > 0 ? create(ProviderPreferencesSchema, { only: batch.only }) : undefined,
      defaultSort: context.workspace.defaultProviderSort,
      parameters: [],
      privateEndpoints: (modelId) => runtime.privateEndpoints(context, modelId),
      refusal: runtime.refusalFor(context, null),
      ranking: runtime.ranking,
    });
  } catch (err) {
    if (err instanceof ConnectError && httpErrorOf(err).status !== 403)
      throw gatewayError(400, `Model ${batch.model} cannot serve this batch: ${err.rawMessage}`);
    throw err;
  }
}

import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { ProviderPreferencesSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { gatewayError, httpErrorOf } from "../../../wire/errors.js";
import type { CallerContext } from "../../engine/inference/caller-context.js";
import type { Deps } from "../deps.js";
import type { Attempt, InferenceApi } from "../../engine/inference/routing.js";

/**
 * A batch's route under its key's governance, as a live call would get it: planned at submission
 * and again while the batch runs (so a guardrail changed meanwhile applies to the items not yet
 * run). Policy refusals stay 403; any other reason the model cannot serve the batch (unknown,
 * wrong output modality, no provider left after `provider.only`) is the API's 400.
 */
export async function batchRoute(
  deps: Deps,
  context: CallerContext,
  batch: { api: InferenceApi; model: string; only: string[] },
): Promise<Attempt[]> {
  try {
    const preferences = batch.only.length > 0 ? create(ProviderPreferencesSchema, { only: batch.only }) : undefined;
    return await deps.engine.plan(
      context,
      { modelIds: [batch.model], api: batch.api, preferences, parameters: [] },
      null,
    );
  } catch (err) {
    if (err instanceof ConnectError && httpErrorOf(err).status !== 403)
      throw gatewayError(400, `Model ${batch.model} cannot serve this batch: ${err.rawMessage}`);
    throw err;
  }
}

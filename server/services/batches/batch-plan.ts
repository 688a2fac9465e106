import { BatchEndpointSchema } from "../../../gen/gateway/v1/batches_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { enumFromStored } from "../../../wire/enums.js";
import type { CallerContext } from "../../engine/inference/caller-context.js";
import type { Deps } from "../deps.js";
import type { Attempt } from "../../engine/inference/routing.js";
import { formatOf, type BatchFormat } from "./batch-formats.js";
import { batchById, type BatchRow } from "./batch-store.js";
import { batchRoute } from "./batch-route.js";

/**
 * How a batch runs now: its key's current governance, its route under it, and its endpoint
 * format. Planned again while the batch runs, so a key disabled or a model refused meanwhile
 * stops it; a ConnectError from here means the batch cannot run any more, anything else is the
 * database being unreachable.
 */
export interface BatchPlan {
  batch: BatchRow;
  context: CallerContext;
  attempts: Attempt[];
  format: BatchFormat;
}

export async function loadPlan(deps: Deps, batchId: string): Promise<BatchPlan> {
  const batch = await batchById(deps.sequelize, batchId);
  if (!batch) throw gatewayError(404, `Batch ${batchId} no longer exists`);
  const format = formatOf(enumFromStored(BatchEndpointSchema, batch.endpoint));
  if (!format) throw gatewayError(400, `endpoint ${batch.endpoint} is not supported for batches`);
  const caller = await deps.engine.governance.caller(batch.key_hash);
  if (!caller || caller.key.disabled) throw gatewayError(401, "The batch's API key is disabled or deleted");
  if (caller.key.expiresAt && caller.key.expiresAt.getTime() <= Date.now())
    throw gatewayError(401, "The batch's API key has expired");
  const context = await deps.engine.callerContext(caller);
  const attempts = await batchRoute(deps, context, {
    api: format.api,
    model: batch.model,
    only: batch.provider_only ?? [],
  });
  return { batch, context, attempts, format };
}

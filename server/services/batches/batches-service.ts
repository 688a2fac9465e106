/**
 * Batches of the caller's workspace (another workspace's batch is a 404). POST answers once the
 * batch is committed; the runner (batch-runner.ts) runs it. Results are shown only in a terminal
 * status; after the retention period reads answer 410.
 *
 * @module
 */
import { getOption } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { BatchesService } from "../../../gen/gateway/v1/batches_pb.js";
import { max_body_bytes } from "../../../gen/gateway/v1/options_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { workspaceOf } from "../../platform/rpc/scope.js";
import { gatewayError } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { withoutProviderCopy } from "./batch-deletion.js";
import { CANCELLED_RESULT, closeOpenItems } from "./batch-store-lifecycle.js";
import {
  deleteTerminalBatch,
  findBatch,
  itemResults,
  listBatches,
  markCancelling,
  TERMINAL,
  type BatchRow,
} from "./batch-store.js";
import { jsonSubmission, messageSubmission, type SubmissionPart } from "./batch-submission-source.js";
import { submitBatch } from "./batch-submission.js";
import { toBatch } from "./batch-view.js";
import { removeUpstreamBatch } from "./native-batch-upstream.js";
import { createSlots } from "./provider-slots.js";

const MAX_IDEMPOTENCY_KEY = 255;
const DEFAULT_PAGE = 20;
/** The API's batch input limit (docs/api/batches.md), for gRPC callers too (the REST facade enforces the route's). */
const MAX_JSON_BYTES = Number(getOption(BatchesService.method.createBatchFromJson, max_body_bytes));
/**
 * Submissions that may hold a database connection while their body still arrives (of the pool's
 * 20); more wait, unread, for one of them to finish.
 */
const MAX_OPEN_SUBMISSIONS = 4;

export function batchesService(deps: Deps, wakeEngine: () => void): ServiceImpl<typeof BatchesService> {
  const { sequelize } = deps;
  const submission = { deps, slots: createSlots(MAX_OPEN_SUBMISSIONS) };

  async function visible(caller: Caller, id: string): Promise<BatchRow> {
    const batch = await findBatch(sequelize, id, workspaceOf(caller));
    if (!batch) throw gatewayError(404, `Batch ${id} not found`);
    return batch;
  }

  async function withResults(batch: BatchRow) {
    if (batch.results_purged_at)
      throw gatewayError(
        410,
        `The results of batch ${batch.id} have expired: they are deleted 30 days after the batch is created`,
      );
    return toBatch(batch, TERMINAL.includes(batch.status) ? await itemResults(sequelize, batch.id) : undefined);
  }

  async function submit(parts: AsyncIterable<SubmissionPart>, ctx: HandlerContext) {
    const caller = callerOf(ctx);
    const idempotencyKey = ctx.requestHeader.get("idempotency-key");
    if (idempotencyKey !== null && (idempotencyKey === "" || idempotencyKey.length > MAX_IDEMPOTENCY_KEY)) {
      throw gatewayError(400, `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY} characters`);
    }
    const context = await deps.engine.callerContext(caller);
    const batch = await submitBatch(submission, context, parts, idempotencyKey);
    wakeEngine();
    return toBatch(batch);
  }

  return {
    createBatch(req, ctx) {
      return submit(messageSubmission(req), ctx);
    },

    createBatchFromJson(slices, ctx) {
      return submit(jsonSubmission(slices, MAX_JSON_BYTES), ctx);
    },

    async getBatch(req, ctx) {
      return withResults(await visible(callerOf(ctx), req.id));
    },

    async listBatches(req, ctx) {
      const caller = callerOf(ctx);
      const limit = req.limit ?? DEFAULT_PAGE;
      if (req.after !== undefined) await visible(caller, req.after);
      const rows = await listBatches(sequelize, workspaceOf(caller), req.after, limit + 1);
      const page = rows.slice(0, limit);
      return {
        object: "list",
        data: page.map((row) => toBatch(row)),
        firstId: page[0]?.id,
        lastId: page.at(-1)?.id,
        hasMore: rows.length > limit,
      };
    },

    async cancelBatch(req, ctx) {
      const caller = callerOf(ctx);
      const batch = await sequelize.transaction(async (transaction) => {
        const locked = await findBatch(sequelize, req.id, workspaceOf(caller), transaction);
        if (!locked) throw gatewayError(404, `Batch ${req.id} not found`);
        if (TERMINAL.includes(locked.status)) throw gatewayError(409, `Batch ${req.id} is already ${locked.status}`);
        if (locked.status !== "cancelling") {
          await markCancelling(sequelize, req.id, transaction);
          // Items not running yet end now; running ones finish, and the last to land completes the cancellation.
          await closeOpenItems(sequelize, [req.id], {
            items: "pending",
            result: CANCELLED_RESULT,
            terminal: "cancelled",
            from: ["cancelling"],
            transaction,
          });
        }
        return (await findBatch(sequelize, req.id, workspaceOf(caller), transaction))!;
      });
      return withResults(batch);
    },

    async deleteBatch(req, ctx) {
      const caller = callerOf(ctx);
      const batch = await visible(caller, req.id);
      if (!TERMINAL.includes(batch.status))
        throw gatewayError(
          409,
          `Batch ${req.id} is ${batch.status}; only a completed, failed, expired or cancelled batch can be deleted`,
        );
      const upstream =
        (await removeUpstreamBatch(deps, caller, batch)) ?? (await withoutProviderCopy(sequelize, batch));
      // Ledger rows are kept: deletion is not a refund.
      await deleteTerminalBatch(sequelize, req.id);
      return { id: batch.id, object: "batch", deletion: { svc: "deleted", upstream } };
    },
  };
}

/**
 * POST /batches, whichever way the submission comes (batch-submission-source.ts): every check that
 * can refuse a batch runs before anything is committed — the body of each item (400 naming its
 * index), duplicate custom ids and model variants (422), the model and its route under the
 * caller's governance (400, 403), the rate limit and the worst-case cost of all items against every
 * budget (429, 402; the cost stays reserved for the batch's window). The items are checked and
 * written in chunks as they arrive (batch-item-writer.ts), inside one transaction that commits only
 * after the last check; the 202 follows the commit. An `Idempotency-Key` returns the batch it first
 * created when the request is the same, 409 otherwise; concurrent duplicates meet at a unique index.
 *
 * @module
 */
import { createHash, randomBytes, type Hash } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { BatchEndpointSchema, type CreateBatchRequest } from "../../../gen/gateway/v1/batches_pb.js";
import {
  estimatePromptTokens,
  isFreeEndpoint,
  multiplyUsd,
  releaseReservation,
  worstCaseCost,
} from "../../engine/index.js";
import { gatewayError } from "../../../wire/errors.js";
import { wireName } from "../../../wire/enums.js";
import type { CallerContext } from "../../engine/inference/caller-context.js";
import type { Deps } from "../deps.js";
import { formatOf, type BatchFormat } from "./batch-formats.js";
import { BatchItemWriter } from "./batch-item-writer.js";
import { batchByIdempotencyKey, IdempotencyKeyTaken, type BatchRow } from "./batch-store.js";
import { batchRoute } from "./batch-route.js";
import type { SubmissionPart } from "./batch-submission-source.js";
import { nativeProviderFor } from "./native-batch-upstream.js";
import type { ProviderSlots } from "./provider-slots.js";

const WINDOW_S = 24 * 3600;
/** A `\u0000` or surrogate escape that is not itself an escaped backslash followed by text. */
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/;

export interface SubmissionRuntime {
  deps: Deps;
  /** Limits the submissions that hold a database connection while their body arrives. */
  slots: ProviderSlots;
}

export async function submitBatch(
  { deps, slots }: SubmissionRuntime,
  context: CallerContext,
  parts: AsyncIterable<SubmissionPart>,
  idempotencyKey: string | null,
): Promise<BatchRow> {
  const { sequelize } = deps;
  const { key } = context.caller;
  // A repeated Idempotency-Key is still read through (the answer depends on the whole request),
  // but nothing of it is written.
  const earlier = idempotencyKey ? await batchByIdempotencyKey(sequelize, key.hash, idempotencyKey) : undefined;
  const id = `batch_${randomBytes(12).toString("hex")}`;
  let writer: BatchItemWriter | undefined;
  let reservationId: string | null = null;
  let requestHash: string | null = null;
  try {
    let checked: { format: BatchFormat; model: string } | undefined;
    let batch: CreateBatchRequest | undefined;
    const items = idempotencyKey ? new ItemsHash() : undefined;
    const seen = new Map<string, number>();
    // The cost grows with both token counts, so the largest prompt with the largest output cap
    // bounds every item: one estimate instead of one per item.
    let promptTokens = 0;
    let outputTokens: number | undefined = 0;
    for await (const part of parts) {
      if (part.kind === "batch") {
        checked = checkedFormat(part.batch);
        writer = earlier
          ? undefined
          : new BatchItemWriter(sequelize, slots, {
              id,
              organizationId: key.organizationId,
              workspaceId: key.workspaceId,
              keyHash: key.hash,
              member: key.creatorUserId ?? null,
              endpoint: wireName(BatchEndpointSchema, part.batch.endpoint) ?? "",
              model: part.batch.model,
            });
        continue;
      }
      if (part.kind === "end") {
        batch = part.batch;
        continue;
      }
      const index = seen.size;
      const first = seen.get(part.customId);
      if (first !== undefined)
        throw gatewayError(
          422,
          `requests[${index}].custom_id '${part.customId}' repeats requests[${first}].custom_id; ` +
            "custom ids must be unique in a batch",
        );
      seen.set(part.customId, index);
      const { format } = checked!;
      const text = checkedItem(checked!, index, part);
      promptTokens = Math.max(promptTokens, estimatePromptTokens(format.promptParts(part.body)));
      const cap = format.maxOutputTokens(part.body);
      outputTokens = cap === undefined || outputTokens === undefined ? undefined : Math.max(outputTokens, cap);
      items?.add(part.customId, text);
      await writer?.add(part.customId, text);
    }
    if (!checked || !batch) throw new Error("the submission ended without its batch fields");
    const { format } = checked;
    const only = batch.provider?.only ?? [];
    requestHash = items ? items.requestHash(batch, only) : null;
    if (earlier) return sameRequest(earlier, requestHash!);
    await writer!.itemsEnded();

    const attempts = await batchRoute(deps, context, { api: format.api, model: batch.model, only });
    const itemEstimate = worstCaseCost(
      attempts.map((a) => a.endpoint),
      promptTokens,
      outputTokens,
    );
    const admission = await deps.engine.reserve(context, {
      estimateUsd: multiplyUsd(itemEstimate, seen.size),
      free: attempts.every((a) => isFreeEndpoint(a.endpoint)),
      reservationTtlS: WINDOW_S,
    });
    reservationId = admission.reservationId;
    return await writer!.commit({
      only,
      total: seen.size,
      itemEstimateUsd: itemEstimate,
      reservationId,
      idempotencyKey,
      requestHash,
      upstreamProvider: nativeProviderFor(deps, format, attempts),
    });
  } catch (err) {
    await writer?.abandon();
    if (reservationId) await releaseReservation(sequelize, reservationId);
    // Another request with the same Idempotency-Key committed first: answer as it would be answered.
    if (err instanceof IdempotencyKeyTaken && idempotencyKey) {
      const winner = await batchByIdempotencyKey(sequelize, key.hash, idempotencyKey);
      if (winner) return sameRequest(winner, requestHash!);
    }
    throw err;
  }
}

/** The batch's endpoint format and model, once they are known: refused before any item is read. */
function checkedFormat(batch: CreateBatchRequest): { format: BatchFormat; model: string } {
  const format = formatOf(batch.endpoint);
  if (!format)
    throw gatewayError(
      400,
      `endpoint ${wireName(BatchEndpointSchema, batch.endpoint) ?? batch.endpoint} is not supported for batches`,
    );
  if (batch.model.includes(":"))
    throw gatewayError(
      422,
      "The batch path cannot serve model variants: " +
        `use ${batch.model.split(":")[0]} without '${batch.model.slice(batch.model.indexOf(":"))}'`,
    );
  return { format, model: batch.model };
}

/** An item's checks (400 naming it); its body as the JSON text that is stored. */
function checkedItem(
  { format, model }: { format: BatchFormat; model: string },
  index: number,
  { customId, body }: { customId: string; body: JsonObject },
): string {
  const path = `requests[${index}]`;
  if (customId.includes("\0")) throw gatewayError(400, `${path}.custom_id must not contain NUL characters`);
  if (body.model !== undefined && body.model !== model) {
    throw gatewayError(
      400,
      `${path}.body.model is '${String(body.model)}' but the batch runs ${model}; items must use the batch's model`,
    );
  }
  if (body.stream === true)
    throw gatewayError(400, `${path}.body.stream must not be true: batch items are not streamed`);
  const problem = format.problem(body, `${path}.body`);
  if (problem) throw gatewayError(400, problem);
  const text = JSON.stringify(body);
  // What PostgreSQL cannot store is bad input, not a failed insert: NUL, and lone surrogates
  // (JSON.stringify writes both, and only those, as \u escapes of these ranges).
  if (text.includes("\\u") && UNSTORABLE_ESCAPE.test(text))
    throw gatewayError(400, `${path}.body must not contain NUL characters or unpaired surrogates`);
  return text;
}

/**
 * The identity of a request for its Idempotency-Key: endpoint, model, `provider.only` and the
 * items (custom id and body, in order), hashed as they stream by. Only computed with a key.
 */
class ItemsHash {
  private readonly hash: Hash = createHash("sha256");
  private count = 0;

  add(customId: string, body: string): void {
    this.hash.update(`[${JSON.stringify(customId)},${body}]\n`);
    this.count++;
  }

  requestHash(batch: CreateBatchRequest, only: string[]): string {
    const identity = JSON.stringify([batch.endpoint, batch.model, only, this.count, this.hash.digest("hex")]);
    return createHash("sha256").update(identity).digest("hex");
  }
}

function sameRequest(earlier: BatchRow, requestHash: string): BatchRow {
  if (earlier.request_hash !== requestHash) {
    throw gatewayError(409, `Idempotency-Key was already used for batch ${earlier.id} with a different request body`);
  }
  return earlier;
}

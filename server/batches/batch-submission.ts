import { createHash, randomBytes } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { QueryTypes } from "sequelize";
import { BatchEndpointSchema, type CreateBatchRequest } from "../../gen/gateway/v1/batches_pb.js";
import { isFreeEndpoint } from "../catalog/catalog.js";
import { gatewayError } from "../core/errors.js";
import { multiplyUsd } from "../core/money.js";
import { wireName } from "../core/wire-enums.js";
import { admit } from "../inference/admission.js";
import type { CallerContext } from "../inference/caller-context.js";
import { estimatePromptTokens, worstCaseCost } from "../inference/cost-estimate.js";
import type { InferenceRuntime } from "../inference/inference-call.js";
import { releaseReservation } from "../usage/usage-ledger.js";
import { formatOf, type BatchFormat } from "./batch-formats.js";
import type { BatchRow } from "./batch-rows.js";
import { batchRoute } from "./batch-route.js";
import { nativeProviderFor } from "./native-batch-upstream.js";

/**
 * POST /batches: every check that can refuse a batch runs before anything is stored — the body of
 * each item (400 naming its index), the model and its route under the caller's governance (400,
 * 403), duplicate custom ids and model variants (422), the rate limit and the worst-case cost of
 * all items against every budget (429, 402; the cost stays reserved for the batch's window). Then
 * the batch and its items are written in one transaction; the 202 follows the commit. An
 * `Idempotency-Key` returns the batch it first created when the body is the same, 409 otherwise;
 * concurrent duplicates meet at a unique index.
 */
const WINDOW_S = 24 * 3600;
/** Items per INSERT statement: large enough to be fast, small enough for one parameter. */
const INSERT_CHUNK = 2_000;

export async function submitBatch(runtime: InferenceRuntime, context: CallerContext, req: CreateBatchRequest, idempotencyKey: string | null): Promise<BatchRow> {
  const { sequelize } = runtime.deps;
  const format = formatOf(req.endpoint);
  if (!format) throw gatewayError(400, `endpoint ${wireName(BatchEndpointSchema, req.endpoint) ?? req.endpoint} is not supported for batches`);
  if (req.model.includes(":")) throw gatewayError(422, `The batch path cannot serve model variants: use ${req.model.split(":")[0]} without '${req.model.slice(req.model.indexOf(":"))}'`);
  const bodies = itemBodies(req, format);
  const requestHash = createHash("sha256").update(JSON.stringify([req.endpoint, req.model, req.provider?.only ?? [], req.requests.map((r, i) => [r.customId, bodies[i]])])).digest("hex");
  const { key } = context.caller;

  if (idempotencyKey) {
    const earlier = await byIdempotencyKey(runtime, key.hash, idempotencyKey);
    if (earlier) return sameRequest(earlier, requestHash);
  }

  const attempts = await batchRoute(runtime, context, { api: format.api, model: req.model, only: req.provider?.only ?? [] });
  // The cost grows with both token counts, so the largest prompt with the largest output cap
  // bounds every item: one estimate instead of one per item.
  let promptTokens = 0;
  let outputTokens: number | undefined = 0;
  for (const body of bodies) {
    promptTokens = Math.max(promptTokens, estimatePromptTokens(format.promptParts(body)));
    const cap = format.maxOutputTokens(body);
    outputTokens = cap === undefined || outputTokens === undefined ? undefined : Math.max(outputTokens, cap);
  }
  const itemEstimate = worstCaseCost(attempts.map((a) => a.endpoint), promptTokens, outputTokens);
  const total = multiplyUsd(itemEstimate, bodies.length);
  const admission = await admit(runtime.deps, context, { estimateUsd: total, free: attempts.every((a) => isFreeEndpoint(a.endpoint)), reservationTtlS: WINDOW_S });

  const id = `batch_${randomBytes(12).toString("hex")}`;
  try {
    return await sequelize.transaction(async (transaction) => {
      const [inserted] = await sequelize.query<BatchRow>(
        `INSERT INTO batches (id, organization_id, workspace_id, key_hash, member_user_id, endpoint, model, provider_only, status,
                              expires_at, total, item_estimate_usd, reservation_id, idempotency_key, request_hash, upstream_provider)
         VALUES (:id, :organizationId, :workspaceId, :keyHash, :member, :endpoint, :model, :only::jsonb, 'validating',
                 now() + interval '24 hours', :total, :estimate, :reservationId, :idempotencyKey, :requestHash, :upstreamProvider)
         ON CONFLICT (key_hash, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
         RETURNING *`,
        {
          type: QueryTypes.SELECT,
          transaction,
          replacements: {
            id,
            organizationId: key.organizationId,
            workspaceId: key.workspaceId,
            keyHash: key.hash,
            member: key.creatorUserId ?? null,
            endpoint: wireName(BatchEndpointSchema, req.endpoint) ?? "",
            model: req.model,
            only: req.provider && req.provider.only.length > 0 ? JSON.stringify(req.provider.only) : null,
            total: bodies.length,
            estimate: itemEstimate,
            reservationId: admission.reservationId,
            idempotencyKey,
            requestHash,
            upstreamProvider: nativeProviderFor(runtime, format, attempts),
          },
        },
      );
      if (!inserted) throw new LostRace();
      for (let start = 0; start < bodies.length; start += INSERT_CHUNK) {
        const chunk = req.requests.slice(start, start + INSERT_CHUNK).map((item, i) => ({ c: item.customId, b: bodies[start + i] }));
        await sequelize.query(
          `INSERT INTO batch_items (batch_id, idx, custom_id, body)
           SELECT :id, :start + (n - 1)::int, x->>'c', x->'b' FROM jsonb_array_elements(:items::jsonb) WITH ORDINALITY AS t(x, n)`,
          { transaction, replacements: { id, start, items: JSON.stringify(chunk) } },
        );
      }
      return inserted;
    });
  } catch (err) {
    if (admission.reservationId) await releaseReservation(sequelize, admission.reservationId);
    // Another request with the same Idempotency-Key committed first: answer as it would be answered.
    if (err instanceof LostRace && idempotencyKey) {
      const earlier = await byIdempotencyKey(runtime, key.hash, idempotencyKey);
      if (earlier) return sameRequest(earlier, requestHash);
    }
    throw err;
  }
}

class LostRace extends Error {}

/** Item bodies as JSON, each checked against the endpoint's format; 400 names the item. */
function itemBodies(req: CreateBatchRequest, format: BatchFormat): JsonObject[] {
  const seen = new Map<string, number>();
  const bodies: JsonObject[] = [];
  for (const [index, item] of req.requests.entries()) {
    const path = `requests[${index}]`;
    const earlier = seen.get(item.customId);
    if (earlier !== undefined) throw gatewayError(422, `${path}.custom_id '${item.customId}' repeats requests[${earlier}].custom_id; custom ids must be unique in a batch`);
    seen.set(item.customId, index);
    // Struct fields are plain JSON objects in protobuf-es.
    const body = item.body!;
    if (body.model !== undefined && body.model !== req.model) {
      throw gatewayError(400, `${path}.body.model is '${String(body.model)}' but the batch runs ${req.model}; items must use the batch's model`);
    }
    if (body.stream === true) throw gatewayError(400, `${path}.body.stream must not be true: batch items are not streamed`);
    const problem = format.problem(body, `${path}.body`);
    if (problem) throw gatewayError(400, problem);
    bodies.push(body);
  }
  return bodies;
}

async function byIdempotencyKey(runtime: InferenceRuntime, keyHash: string, idempotencyKey: string): Promise<BatchRow | undefined> {
  const [row] = await runtime.deps.sequelize.query<BatchRow>("SELECT * FROM batches WHERE key_hash = :keyHash AND idempotency_key = :idempotencyKey", {
    type: QueryTypes.SELECT,
    replacements: { keyHash, idempotencyKey },
  });
  return row;
}

function sameRequest(earlier: BatchRow, requestHash: string): BatchRow {
  if (earlier.request_hash !== requestHash) {
    throw gatewayError(409, `Idempotency-Key was already used for batch ${earlier.id} with a different request body`);
  }
  return earlier;
}

/**
 * A stored batch as the Batch object (docs/api/batches.md): timestamps in Unix seconds, `results` only in a
 * terminal status (else null, and always null in lists), `usage` summed over the items. Usage
 * has no upstream cost split: the ledger keeps one cost per item.
 *
 * @module
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  BatchEndpointSchema,
  BatchStatusSchema,
  CompletionWindowSchema,
  type BatchSchema,
} from "../../../gen/gateway/v1/batches_pb.js";
import { addUsd, usdNumber } from "../../engine/index.js";
import { enumFromStored } from "../../../wire/enums.js";
import { itemId, type BatchRow, type ItemResultRow } from "./batch-store.js";

type BatchInit = MessageInitShape<typeof BatchSchema>;

export function toBatch(row: BatchRow, results?: ItemResultRow[]): BatchInit {
  const promptTokens = BigInt(row.prompt_tokens);
  const completionTokens = BigInt(row.completion_tokens);
  const paid = row.cost_usd;
  const byok = row.byok_cost_usd;
  return {
    id: row.id,
    object: "batch",
    status: enumFromStored(BatchStatusSchema, row.status),
    endpoint: enumFromStored(BatchEndpointSchema, row.endpoint),
    model: row.model,
    completionWindow: enumFromStored(CompletionWindowSchema, row.completion_window),
    createdAt: seconds(row.created_at),
    finalizedAt: row.finalized_at ? seconds(row.finalized_at) : undefined,
    requestCounts: { completed: row.completed, failed: row.failed, total: row.total },
    error: row.error_message === null ? undefined : { message: row.error_message, code: row.error_code ?? undefined },
    results: (results ?? []).map((item) => ({
      id: itemId(row.id, item.idx),
      customId: item.custom_id,
      ...(item.result && "response" in item.result
        ? {
            response: {
              body: item.result.response.body,
              requestId: item.result.response.request_id,
              statusCode: item.result.response.status_code,
            },
          }
        : {}),
      ...(item.result && "error" in item.result
        ? {
            error: {
              message: item.result.error.message,
              param: item.result.error.param,
              type: item.result.error.type,
              errorType: item.result.error.error_type,
            },
          }
        : {}),
    })),
    usage: {
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      completionTokensDetails: { reasoningTokens: BigInt(row.reasoning_tokens) },
      promptTokensDetails: { cachedTokens: BigInt(row.cached_tokens) },
      cost: usdNumber(addUsd(paid, byok)),
      costDetails: {},
      isByok: Number(byok) > 0,
      speed: "standard",
    },
  };
}

function seconds(date: Date): bigint {
  return BigInt(Math.floor(date.getTime() / 1000));
}

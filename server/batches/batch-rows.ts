import type { JsonObject } from "@bufbuild/protobuf";
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";

/**
 * The `batches` row as the service and the engine read it (migration 0005). Plain SQL rather than
 * a Sequelize model: the engine's statements are set-based and the columns are read-only outside
 * them.
 */
export type BatchStatusName = "validating" | "in_progress" | "cancelling" | "completed" | "failed" | "expired" | "cancelled";

export const TERMINAL: readonly BatchStatusName[] = ["completed", "failed", "expired", "cancelled"];

export interface BatchRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  key_hash: string;
  member_user_id: string | null;
  endpoint: string;
  model: string;
  completion_window: string;
  provider_only: string[] | null;
  status: BatchStatusName;
  created_at: Date;
  expires_at: Date;
  finalized_at: Date | null;
  error_message: string | null;
  error_code: number | null;
  total: number;
  completed: number;
  failed: number;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
  cached_tokens: string;
  cost_usd: string;
  byok_cost_usd: string;
  item_estimate_usd: string;
  reservation_id: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  upstream_provider: string | null;
  upstream_batch_id: string | null;
  results_purged_at: Date | null;
}

/** The stored outcome of one item: exactly one of `response` and `error`. */
export type ItemResult =
  | { response: { body: JsonObject; request_id: string; status_code: number } }
  | { error: { message: string; param: string; type: string; error_type: string } };

export interface ItemResultRow {
  idx: number;
  custom_id: string;
  result: ItemResult | null;
}

/** The id of a batch's item, also its ledger `generation_id` and its response's `request_id`. */
export function itemId(batchId: string, idx: number): string {
  return `${batchId}-${idx}`;
}

export async function findBatch(sequelize: Sequelize, id: string, workspaceScope: { organizationId: string; workspaceId?: string }, transaction?: Transaction): Promise<BatchRow | undefined> {
  const [row] = await sequelize.query<BatchRow>(
    `SELECT * FROM batches WHERE id = :id AND organization_id = :organizationId ${workspaceScope.workspaceId ? "AND workspace_id = :workspaceId" : ""} ${transaction ? "FOR UPDATE" : ""}`,
    { type: QueryTypes.SELECT, replacements: { id, ...workspaceScope }, transaction },
  );
  return row;
}

export async function itemResults(sequelize: Sequelize, batchId: string): Promise<ItemResultRow[]> {
  return sequelize.query<ItemResultRow>("SELECT idx, custom_id, result FROM batch_items WHERE batch_id = :batchId ORDER BY idx", {
    type: QueryTypes.SELECT,
    replacements: { batchId },
  });
}

/** An error result, as the engine stores it for items that did not get an answer. */
export function errorResult(message: string, type: string, errorType: string, param = ""): ItemResult {
  return { error: { message, param, type, error_type: errorType } };
}

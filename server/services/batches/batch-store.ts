import type { JsonObject } from "@bufbuild/protobuf";
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { WorkspaceScope } from "../../platform/rpc/scope.js";

/**
 * The store of the `batches` and `batch_items` tables (migrations 0005, 0008, 0018): every
 * statement on them, in plain SQL rather than Sequelize models, as the runner's statements are
 * set-based and the columns are read-only outside them. This file holds the rows and what the API
 * reads and writes; batch-store-queue.ts the claims and leases of the runner and of native batches,
 * batch-store-lifecycle.ts the status changes, batch-store-settlement.ts the recording of finished
 * items.
 */
export type BatchStatusName =
  | "validating"
  | "in_progress"
  | "cancelling"
  | "completed"
  | "failed"
  | "expired"
  | "cancelled";

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

export async function findBatch(
  sequelize: Sequelize,
  id: string,
  workspaceScope: { organizationId: string; workspaceId?: string },
  transaction?: Transaction,
): Promise<BatchRow | undefined> {
  const [row] = await sequelize.query<BatchRow>(
    `SELECT * FROM batches
      WHERE id = :id AND organization_id = :organizationId
        ${workspaceScope.workspaceId ? "AND workspace_id = :workspaceId" : ""} ${transaction ? "FOR UPDATE" : ""}`,
    { type: QueryTypes.SELECT, replacements: { id, ...workspaceScope }, transaction },
  );
  return row;
}

/** The batch by id alone, for the runner (its caller was checked at submission). */
export async function batchById(sequelize: Sequelize, batchId: string): Promise<BatchRow | undefined> {
  const [batch] = await sequelize.query<BatchRow>("SELECT * FROM batches WHERE id = :batchId", {
    type: QueryTypes.SELECT,
    replacements: { batchId },
  });
  return batch;
}

export async function batchByIdempotencyKey(
  sequelize: Sequelize,
  keyHash: string,
  idempotencyKey: string,
): Promise<BatchRow | undefined> {
  const [row] = await sequelize.query<BatchRow>(
    "SELECT * FROM batches WHERE key_hash = :keyHash AND idempotency_key = :idempotencyKey",
    {
      type: QueryTypes.SELECT,
      replacements: { keyHash, idempotencyKey },
    },
  );
  return row;
}

/** Newest first, after the batch `after` (an id of the scope); one page of `limit` rows. */
export function listBatches(
  sequelize: Sequelize,
  scope: WorkspaceScope,
  after: string | undefined,
  limit: number,
): Promise<BatchRow[]> {
  return sequelize.query<BatchRow>(
    `SELECT * FROM batches
      WHERE organization_id = :organizationId AND workspace_id = :workspaceId
        ${after !== undefined ? "AND (created_at, id) < (SELECT created_at, id FROM batches WHERE id = :after)" : ""}
      ORDER BY created_at DESC, id DESC
      LIMIT :limit`,
    { type: QueryTypes.SELECT, replacements: { ...scope, after: after ?? null, limit } },
  );
}

/** `cancelling`, and due at once on a provider's batch API, so the provider hears of the cancel now. */
export async function markCancelling(sequelize: Sequelize, id: string, transaction: Transaction): Promise<void> {
  await sequelize.query("UPDATE batches SET status = 'cancelling', upstream_next_poll_at = now() WHERE id = :id", {
    replacements: { id },
    transaction,
  });
}

/** Deletes the batch and its items if it is in a terminal status; its ledger rows stay. */
export async function deleteTerminalBatch(sequelize: Sequelize, id: string): Promise<void> {
  await sequelize.query("DELETE FROM batches WHERE id = :id AND status = ANY(ARRAY[:terminal]::text[])", {
    replacements: { id, terminal: [...TERMINAL] },
  });
}

/**
 * The provider that answered most of the batch's items, from their ledger rows; undefined when none
 * reached a provider. The ledger is read by the batch's key from its creation on, an index range,
 * so an old batch does not scan the whole ledger.
 */
export async function mostUsedProvider(sequelize: Sequelize, batch: BatchRow): Promise<string | undefined> {
  const [row] = await sequelize.query<{ provider_slug: string }>(
    `SELECT provider_slug FROM usage_ledger
      WHERE key_hash = :keyHash AND created_at >= :createdAt AND batch_id = :batchId AND provider_slug IS NOT NULL
      GROUP BY provider_slug
      ORDER BY count(*) FILTER (WHERE status = 'success') DESC, count(*) DESC, provider_slug
      LIMIT 1`,
    {
      type: QueryTypes.SELECT,
      replacements: { keyHash: batch.key_hash, createdAt: batch.created_at, batchId: batch.id },
    },
  );
  return row?.provider_slug;
}

export async function itemResults(sequelize: Sequelize, batchId: string): Promise<ItemResultRow[]> {
  return sequelize.query<ItemResultRow>(
    "SELECT idx, custom_id, result FROM batch_items WHERE batch_id = :batchId ORDER BY idx",
    {
      type: QueryTypes.SELECT,
      replacements: { batchId },
    },
  );
}

/** An error result, as the runner stores it for items that did not get an answer. */
export function errorResult(message: string, type: string, errorType: string, param = ""): ItemResult {
  return { error: { message, param, type, error_type: errorType } };
}

/** A submitted batch's row before its items are all read (batch-item-writer.ts). */
export interface BatchOpening {
  id: string;
  organizationId: string;
  workspaceId: string;
  keyHash: string;
  member: string | null;
  endpoint: string;
  model: string;
}

/** What a submission knows once its last item is read and checked. */
export interface BatchClosing {
  only: string[];
  total: number;
  itemEstimateUsd: string;
  reservationId: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  upstreamProvider: string | null;
}

/** Another submission with the same Idempotency-Key committed first. */
export class IdempotencyKeyTaken extends Error {}

/** The batch row, its totals still open: the first statement of a submission's transaction. */
export async function insertOpenBatch(
  sequelize: Sequelize,
  batch: BatchOpening,
  transaction: Transaction,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO batches (id, organization_id, workspace_id, key_hash, member_user_id, endpoint, model, status,
                          expires_at, total)
     VALUES (:id, :organizationId, :workspaceId, :keyHash, :member, :endpoint, :model, 'validating',
             now() + interval '24 hours', 0)`,
    { transaction, replacements: { ...batch } },
  );
}

/**
 * Items `start`, `start + 1`, … of the batch. The bodies are JSON already: one array, parsed once by
 * PostgreSQL. Sent as a bind parameter in bytes (a Buffer goes in binary format, which for text is
 * its UTF-8 as is), so the text is neither escaped nor scanned nor encoded again on its way.
 */
export function insertItems(
  sequelize: Sequelize,
  batchId: string,
  start: number,
  customIds: string[],
  bodies: Buffer,
  transaction: Transaction,
): Promise<unknown> {
  return sequelize.query(
    `INSERT INTO batch_items (batch_id, idx, custom_id, body)
     SELECT $1, $2 + (n - 1)::int, c, b
       FROM ROWS FROM (unnest($3::text[]), jsonb_array_elements($4::text::jsonb)) WITH ORDINALITY AS t(c, b, n)`,
    { transaction, bind: [batchId, start, customIds, bodies] },
  );
}

/** Sets the batch's totals; IdempotencyKeyTaken when another batch holds its Idempotency-Key. */
export async function closeBatch(
  sequelize: Sequelize,
  id: string,
  closing: BatchClosing,
  transaction: Transaction,
): Promise<BatchRow> {
  try {
    const [row] = await sequelize.query<BatchRow>(
      `UPDATE batches SET provider_only = :only::jsonb, total = :total, item_estimate_usd = :estimate,
              reservation_id = :reservationId, idempotency_key = :idempotencyKey, request_hash = :requestHash,
              upstream_provider = :upstreamProvider
        WHERE id = :id RETURNING *`,
      {
        type: QueryTypes.SELECT,
        transaction,
        replacements: {
          id,
          only: closing.only.length > 0 ? JSON.stringify(closing.only) : null,
          total: closing.total,
          estimate: closing.itemEstimateUsd,
          reservationId: closing.reservationId,
          idempotencyKey: closing.idempotencyKey,
          requestHash: closing.requestHash,
          upstreamProvider: closing.upstreamProvider,
        },
      },
    );
    return row!;
  } catch (err) {
    if (violates(err, "batches_idempotency")) throw new IdempotencyKeyTaken();
    throw err;
  }
}

function violates(err: unknown, constraint: string): boolean {
  const cause = (err as { parent?: { code?: unknown; constraint?: unknown } } | null)?.parent;
  return cause?.code === "23505" && cause.constraint === constraint;
}

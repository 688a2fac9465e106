/**
 * The status changes of a batch that are not an item settling (batch-store-settlement.ts does those):
 * start, cancel, expire, fail, purge. Each is one statement, safe to run from any number of
 * instances at once.
 *
 * @module
 */
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import { errorResult, type BatchStatusName, type ItemResult } from "./batch-store.js";

/** `validating` → `in_progress`: the runner's acceptance of stored batches. */
export async function startValidated(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ id: string }>(
    `UPDATE batches SET status = 'in_progress'
      WHERE id IN (SELECT id FROM batches WHERE status = 'validating' ORDER BY created_at
                    LIMIT 100 FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.id);
}

/**
 * Gives open items of the batches an error result and counts them as failed; a batch whose every
 * item is then done takes `terminal` (and its budget reservation drops to nothing). `items` picks
 * which open items: all of them, only those not running, or only running ones whose lease lapsed.
 */
type OpenItems = "all" | "pending" | "abandoned";

const ITEM_FILTER: Record<OpenItems, string> = {
  all: "true",
  pending: "i.state = 'pending'",
  abandoned: "i.state = 'running' AND i.lease_expires_at < now()",
};

export async function closeOpenItems(
  sequelize: Sequelize,
  ids: string[],
  options: {
    items: OpenItems;
    result: ItemResult;
    terminal: BatchStatusName;
    from: BatchStatusName[];
    error?: { message: string; code?: number };
    transaction?: Transaction;
  },
): Promise<{ id: string; status: BatchStatusName }[]> {
  if (ids.length === 0) return [];
  return sequelize.query<{ id: string; status: BatchStatusName }>(
    `WITH closed AS (
       UPDATE batch_items i
          SET state = 'done', succeeded = false, result = $result::jsonb, lease_owner = NULL, lease_expires_at = NULL
        WHERE i.batch_id = ANY($ids::text[]) AND i.state <> 'done' AND ${ITEM_FILTER[options.items]}
          AND EXISTS (SELECT 1 FROM batches b WHERE b.id = i.batch_id AND b.status = ANY($from::text[]))
       RETURNING i.batch_id
     ), counts AS (
       SELECT batch_id, count(*)::int AS n FROM closed GROUP BY batch_id
     ), updated AS (
       UPDATE batches b
          SET failed = b.failed + coalesce(c.n, 0),
              status = CASE WHEN b.completed + b.failed + coalesce(c.n, 0) >= b.total THEN $terminal ELSE b.status END,
              finalized_at = CASE WHEN b.completed + b.failed + coalesce(c.n, 0) >= b.total THEN now()
                                  ELSE b.finalized_at END,
              error_message = coalesce($errorMessage, b.error_message),
              error_code = coalesce($errorCode, b.error_code)
         FROM unnest($ids::text[]) AS t(id) LEFT JOIN counts c ON c.batch_id = t.id
        WHERE b.id = t.id AND b.status = ANY($from::text[])
       RETURNING b.id, b.status, b.reservation_id
     ), released AS (
       UPDATE budget_reservations r SET amount_usd = 0 FROM updated u
        WHERE r.id = u.reservation_id AND u.status = $terminal
     )
     SELECT id, status FROM updated`,
    {
      type: QueryTypes.SELECT,
      transaction: options.transaction,
      bind: {
        ids,
        result: JSON.stringify(options.result),
        terminal: options.terminal,
        from: options.from,
        errorMessage: options.error?.message ?? null,
        errorCode: options.error?.code ?? null,
      },
    },
  );
}

export const CANCELLED_RESULT = errorResult(
  "The batch was cancelled before this request ran",
  "cancelled",
  "cancelled",
);
export const EXPIRED_RESULT = errorResult(
  "The batch's 24h completion window ended before this request finished",
  "expired",
  "batch_expired",
);

/** Batches whose window has passed: unfinished items get an error, finished ones keep results. */
export async function expireOverdue(sequelize: Sequelize): Promise<void> {
  const overdue = await sequelize.query<{ id: string }>(
    `SELECT id FROM batches WHERE status IN ('validating', 'in_progress', 'cancelling') AND expires_at < now()
      LIMIT 100`,
    {
      type: QueryTypes.SELECT,
    },
  );
  await closeOpenItems(
    sequelize,
    overdue.map((row) => row.id),
    { items: "all", result: EXPIRED_RESULT, terminal: "expired", from: ["validating", "in_progress", "cancelling"] },
  );
}

/** Cancelling batches whose running items were abandoned by a stopped instance. */
export async function finishCancelling(sequelize: Sequelize): Promise<void> {
  const cancelling = await sequelize.query<{ id: string }>(
    `SELECT id FROM batches WHERE status = 'cancelling' LIMIT 100`,
    { type: QueryTypes.SELECT },
  );
  await closeOpenItems(
    sequelize,
    cancelling.map((row) => row.id),
    { items: "abandoned", result: CANCELLED_RESULT, terminal: "cancelled", from: ["cancelling"] },
  );
}

/** A batch that cannot run at all: `failed` with the reason, every open item with it too. */
export async function failBatch(sequelize: Sequelize, id: string, message: string, code?: number): Promise<void> {
  await closeOpenItems(sequelize, [id], {
    items: "all",
    result: errorResult(message, "batch_failed", "batch_failed"),
    terminal: "failed",
    from: ["validating", "in_progress"],
    error: { message, ...(code === undefined ? {} : { code }) },
  });
}

/** Results are kept 30 days from creation; then the items go and reads answer 410. */
export const RETENTION_DAYS = 30;

export async function purgeExpiredResults(sequelize: Sequelize): Promise<void> {
  await sequelize.query(
    `WITH old AS (
       UPDATE batches SET results_purged_at = now()
        WHERE id IN (SELECT id FROM batches
                      WHERE results_purged_at IS NULL AND created_at < now() - make_interval(days => $days)
                       AND status IN ('completed', 'failed', 'expired', 'cancelled') LIMIT 100 FOR UPDATE SKIP LOCKED)
       RETURNING id
     )
     DELETE FROM batch_items WHERE batch_id IN (SELECT id FROM old)`,
    { bind: { days: RETENTION_DAYS } },
  );
}

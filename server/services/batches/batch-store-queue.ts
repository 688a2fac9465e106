/**
 * The batch tables as queues (batch-store.ts has the rows): items claimed one by one by the runner
 * of any instance under a lease it renews, and batches on a provider's own batch API claimed by
 * pushing their next poll forward. Every write to a leased item is fenced by its `lease_owner`.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { QueryTypes, type Sequelize } from "sequelize";
import type { BatchRow } from "./batch-store.js";

/** An item claimed for a run; `attempts` counts this one. */
export interface ClaimedItemRow {
  batch_id: string;
  idx: number;
  body: JsonObject;
  attempts: number;
}

/** Up to `limit` due items of running batches (not native ones), now leased to `owner`. */
export function claimItems(
  sequelize: Sequelize,
  owner: string,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedItemRow[]> {
  return sequelize.query<ClaimedItemRow>(
    `WITH picked AS (
       SELECT i.batch_id, i.idx FROM batch_items i JOIN batches b ON b.id = i.batch_id
        WHERE b.status = 'in_progress' AND b.upstream_provider IS NULL AND i.state <> 'done' AND i.available_at <= now()
          AND (i.state = 'pending' OR i.lease_expires_at < now())
        ORDER BY i.batch_id, i.available_at
        LIMIT $limit
        FOR UPDATE OF i SKIP LOCKED
     )
     UPDATE batch_items i
        SET state = 'running', lease_owner = $owner, lease_expires_at = now() + make_interval(secs => $lease),
            attempts = i.attempts + 1
       FROM picked p
      WHERE i.batch_id = p.batch_id AND i.idx = p.idx
     RETURNING i.batch_id, i.idx, i.body, i.attempts`,
    { type: QueryTypes.SELECT, bind: { limit, owner, lease: leaseSeconds } },
  );
}

/**
 * The item goes back to the queue, due again in `delaySeconds`, if `owner` still holds it. Unless
 * the run `counts` as a try, the claim's try is given back (a wait for a rate limit's window).
 */
export async function retryItemLater(
  sequelize: Sequelize,
  owner: string,
  item: { batchId: string; idx: number },
  delaySeconds: number,
  counts = true,
): Promise<void> {
  await sequelize.query(
    `UPDATE batch_items SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL,
            available_at = now() + make_interval(secs => $delay),
            attempts = attempts - CASE WHEN $counts THEN 0 ELSE 1 END
      WHERE batch_id = $batchId AND idx = $idx AND state = 'running' AND lease_owner = $owner`,
    { bind: { delay: delaySeconds, batchId: item.batchId, idx: item.idx, owner, counts } },
  );
}

/** Extends the leases of every item `owner` runs or has not recorded yet. */
export async function renewItemLeases(sequelize: Sequelize, owner: string, leaseSeconds: number): Promise<void> {
  await sequelize.query(
    `UPDATE batch_items SET lease_expires_at = now() + make_interval(secs => $lease)
      WHERE lease_owner = $owner AND state = 'running'`,
    {
      bind: { lease: leaseSeconds, owner },
    },
  );
}

/** Who runs items now, native batches' holds aside (the predicate of the index batch_items_leased). */
export async function itemLeaseOwners(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ owner: string }>(
    "SELECT DISTINCT lease_owner AS owner FROM batch_items WHERE state = 'running' AND lease_owner NOT LIKE 'native:%'",
    {
      type: QueryTypes.SELECT,
    },
  );
  return rows.map((row) => row.owner);
}

/** Puts `owner`'s items back in the queue as if their leases had lapsed: its results can no longer be recorded. */
export async function releaseItemLeases(sequelize: Sequelize, owner: string): Promise<void> {
  await sequelize.query(
    "UPDATE batch_items SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL " +
      "WHERE lease_owner = $owner AND state = 'running'",
    {
      bind: { owner },
    },
  );
}

/** Claims up to `limit` due native batches by holding them off for `holdSeconds`; their ids. */
export async function claimNativeBatches(sequelize: Sequelize, limit: number, holdSeconds: number): Promise<string[]> {
  const due = await sequelize.query<{ id: string }>(
    `UPDATE batches SET upstream_next_poll_at = now() + make_interval(secs => $hold)
      WHERE id IN (SELECT id FROM batches
                    WHERE upstream_provider IS NOT NULL AND status IN ('in_progress', 'cancelling')
                      AND (upstream_next_poll_at IS NULL OR upstream_next_poll_at <= now())
                    ORDER BY upstream_next_poll_at NULLS FIRST LIMIT $limit FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    { type: QueryTypes.SELECT, bind: { hold: holdSeconds, limit } },
  );
  return due.map(({ id }) => id);
}

/** The items of a native batch not yet handed to its provider. */
export function pendingItems(sequelize: Sequelize, batchId: string): Promise<{ idx: number; body: JsonObject }[]> {
  return sequelize.query<{ idx: number; body: JsonObject }>(
    "SELECT idx, body FROM batch_items WHERE batch_id = :id AND state = 'pending' ORDER BY idx",
    {
      type: QueryTypes.SELECT,
      replacements: { id: batchId },
    },
  );
}

/** Holds some pending items under `owner`, so that the settlement (fenced by owner) takes their results. */
export async function holdPendingItems(
  sequelize: Sequelize,
  batchId: string,
  idxs: number[],
  owner: string,
): Promise<void> {
  if (idxs.length === 0) return;
  await sequelize.query(
    `UPDATE batch_items SET state = 'running', lease_owner = :owner, lease_expires_at = 'infinity',
       attempts = attempts + 1
      WHERE batch_id = :id AND state = 'pending' AND idx IN (:idxs)`,
    { replacements: { id: batchId, owner, idxs } },
  );
}

/**
 * Records the provider's batch `upstreamId` and holds the pending items under `owner` for as long
 * as the provider has them; false (nothing written) when the batch stopped running or has a
 * provider batch already.
 */
export function recordUpstreamBatch(
  sequelize: Sequelize,
  batchId: string,
  upstreamId: string,
  hold: { owner: string; pollSeconds: number },
): Promise<boolean> {
  return sequelize.transaction(async (transaction) => {
    const [row] = await sequelize.query<Pick<BatchRow, "status" | "upstream_batch_id">>(
      "SELECT status, upstream_batch_id FROM batches WHERE id = :id FOR UPDATE",
      {
        type: QueryTypes.SELECT,
        replacements: { id: batchId },
        transaction,
      },
    );
    if (row?.status !== "in_progress" || row.upstream_batch_id) return false;
    await sequelize.query(
      `UPDATE batches SET upstream_batch_id = :upstreamId, upstream_next_poll_at = now() + make_interval(secs => :pollS)
        WHERE id = :id`,
      {
        replacements: { id: batchId, upstreamId, pollS: hold.pollSeconds },
        transaction,
      },
    );
    await sequelize.query(
      `UPDATE batch_items SET state = 'running', lease_owner = :owner, lease_expires_at = 'infinity',
         attempts = attempts + 1
        WHERE batch_id = :id AND state = 'pending'`,
      { replacements: { id: batchId, owner: hold.owner }, transaction },
    );
    return true;
  });
}

/** The native batch is due again in `delaySeconds`. */
export async function pollNativeBatchIn(sequelize: Sequelize, batchId: string, delaySeconds: number): Promise<void> {
  await sequelize.query(
    `UPDATE batches SET upstream_next_poll_at = now() + make_interval(secs => :delayS) WHERE id = :id`,
    {
      replacements: { id: batchId, delayS: delaySeconds },
    },
  );
}

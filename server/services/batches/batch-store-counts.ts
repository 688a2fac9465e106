import { QueryTypes, type Sequelize } from "sequelize";

/**
 * How many items the batches still running hold, by state (the metrics read it at scrape time):
 * open items through the partial indexes on open items and on active batches (migration 0005),
 * finished ones from each batch's own counters, so the table of every item ever run is never
 * scanned. A native batch's items count as running while its provider holds them.
 */
export interface RunningBatchItems {
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
}

const ACTIVE = "b.status IN ('validating', 'in_progress', 'cancelling')";

export async function countItemsOfRunningBatches(sequelize: Sequelize): Promise<RunningBatchItems> {
  const rows = await sequelize.query<{ state: keyof RunningBatchItems; n: string }>(
    `SELECT i.state AS state, count(*)::bigint AS n
       FROM batches b JOIN batch_items i ON i.batch_id = b.id
      WHERE ${ACTIVE} AND i.state <> 'done'
      GROUP BY i.state
     UNION ALL
     SELECT 'succeeded', coalesce(sum(b.completed), 0)::bigint FROM batches b WHERE ${ACTIVE}
     UNION ALL
     SELECT 'failed', coalesce(sum(b.failed), 0)::bigint FROM batches b WHERE ${ACTIVE}`,
    { type: QueryTypes.SELECT },
  );
  const counts: RunningBatchItems = { pending: 0, running: 0, succeeded: 0, failed: 0 };
  for (const { state, n } of rows) counts[state] = Number(n);
  return counts;
}

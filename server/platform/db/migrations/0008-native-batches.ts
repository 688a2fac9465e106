import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Batches run on a provider's own batch API are driven batch by batch, not item by item: the
 * batch row is the queue entry. `upstream_next_poll_at` is both the schedule and the claim: an
 * instance takes a due batch by moving it into the future in the same statement that selects it
 * with `SKIP LOCKED`, so one instance polls it at a time, and a crashed instance's batch is due
 * again once that time passes.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE batches ADD COLUMN upstream_next_poll_at timestamptz;
    CREATE INDEX batches_native_due ON batches (upstream_next_poll_at)
      WHERE upstream_provider IS NOT NULL AND status IN ('in_progress', 'cancelling');
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `DROP INDEX batches_native_due; ALTER TABLE batches DROP COLUMN upstream_next_poll_at;`,
  );
};

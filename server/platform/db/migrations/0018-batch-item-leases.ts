import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * The owners of the batch items being run, read by every instance's batch runner once a second to
 * release the items of a gone process of its machine (server/platform/workers/leased-worker.ts, releaseDead).
 * Only items run here item by item: those held by a provider's batch (`native:<id>`) may be many
 * and never belong to a process.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `CREATE INDEX batch_items_leased ON batch_items (lease_owner)
      WHERE state = 'running' AND lease_owner NOT LIKE 'native:%'`,
  );
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`DROP INDEX batch_items_leased`);
};

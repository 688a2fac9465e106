import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * The request id (`x-request-id`) of the request that made each call, so a ledger row can be found
 * from a client's report or a log line. Nullable: rows written before, and calls no request made
 * (batch items, video jobs), have none. Adding a nullable column without a default rewrites nothing.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE usage_ledger ADD COLUMN request_id text`);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE usage_ledger DROP COLUMN request_id`);
};

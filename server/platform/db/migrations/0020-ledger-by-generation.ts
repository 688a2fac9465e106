import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * The ledger by generation id: GET /generation?id= finds a generation's rows (one per upstream
 * attempt) with it, and the list of generations tells a generation's last attempt from the earlier
 * ones through it. The partial unique indexes of batch items and video jobs cover only their rows.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`CREATE INDEX usage_ledger_by_generation ON usage_ledger (generation_id)`);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`DROP INDEX IF EXISTS usage_ledger_by_generation`);
};

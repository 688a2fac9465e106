import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * The prompt tokens each call wrote to the provider's prompt cache, which providers bill at their
 * own price, beside `cached_tokens` (the reads). Rows written before count none. A constant default
 * rewrites nothing.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE usage_ledger ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0`);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE usage_ledger DROP COLUMN cache_write_tokens`);
};

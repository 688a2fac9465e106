import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * A private endpoint's negotiated prompt cache prices (USD per token), like the configured
 * endpoints' `input_cache_read` / `input_cache_write`. Null: the prompt price applies. Nullable
 * columns without a default rewrite nothing.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `ALTER TABLE private_endpoints ADD COLUMN pricing_input_cache_read numeric,
       ADD COLUMN pricing_input_cache_write numeric`,
  );
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `ALTER TABLE private_endpoints DROP COLUMN pricing_input_cache_read, DROP COLUMN pricing_input_cache_write`,
  );
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * A provider's `kind` is whatever the provider registry knows (server/engine/providers/registry.ts):
 * the catalog sync writes only kinds GATEWAY_CONFIG was checked against, so a list of them here
 * would need a migration for every new kind (azure, google, bedrock came at once).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE providers DROP CONSTRAINT providers_kind_check`);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `ALTER TABLE providers ADD CONSTRAINT providers_kind_check CHECK (kind IN ('openai', 'anthropic'))`,
  );
};

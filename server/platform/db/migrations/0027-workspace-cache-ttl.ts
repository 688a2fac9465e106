import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/** A workspace's default response cache TTL, for its calls that ask for none (docs/cache.md); null: not cached. */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `ALTER TABLE workspaces ADD COLUMN cache_ttl_seconds integer CHECK (cache_ttl_seconds > 0)`,
  );
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE workspaces DROP COLUMN cache_ttl_seconds`);
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Whether a vault secret may also be released to http URLs of its hosts (the interns' fetch tool).
 * False for every existing row: secrets go only to https URLs until stored again with the mark.
 * A constant default adds the column without rewriting the table.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE vault_secrets ADD COLUMN allow_http boolean NOT NULL DEFAULT false`);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE vault_secrets DROP COLUMN allow_http`);
};

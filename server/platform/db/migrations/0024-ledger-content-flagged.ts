import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Whether a guardrail's content filter with the `flag` action matched the call's input (the call
 * went through unchanged): the mark an operator looks for in the ledger. Never the matched text.
 * Rows written before were never flagged. A constant default rewrites nothing.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE usage_ledger ADD COLUMN content_flagged boolean NOT NULL DEFAULT false`);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`ALTER TABLE usage_ledger DROP COLUMN content_flagged`);
};

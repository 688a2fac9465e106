import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Every committed change to what governs a key (the key, its organization and workspace, budgets,
 * members, guardrails and their assignments, BYOK credentials, private endpoints) is announced on
 * the `gateway_governance` channel, so that every gateway instance drops its cached governance
 * (server/engine/governance/governance-cache.ts). Statement-level triggers: one notification per
 * statement, and PostgreSQL folds identical notifications of one transaction into one.
 */
export const GOVERNANCE_TABLES = [
  "organizations",
  "workspaces",
  "api_keys",
  "workspace_budgets",
  "members",
  "guardrails",
  "guardrail_key_assignments",
  "guardrail_member_assignments",
  "byok_credentials",
  "private_endpoints",
];

export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE FUNCTION gateway_notify_governance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('gateway_governance', TG_TABLE_NAME);
      RETURN NULL;
    END $$;
    ${GOVERNANCE_TABLES.map(
      (table) => `
    CREATE TRIGGER ${table}_notify_governance AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION gateway_notify_governance();`,
    ).join("")}
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ${GOVERNANCE_TABLES.map((table) => `DROP TRIGGER IF EXISTS ${table}_notify_governance ON ${table};`).join("\n")}
    DROP FUNCTION IF EXISTS gateway_notify_governance();
  `);
};

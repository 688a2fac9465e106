import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Every workspace has a default guardrail (`default_guardrail_id` is a uuid, never null).
 * Workspaces without one get a guardrail that restricts nothing (server/services/guardrails/unrestricted-
 * guardrail.ts; the values are repeated here so this migration never changes), and the column
 * becomes NOT NULL. A workspace and its first guardrail point at each other, so the workspace's
 * foreign key is checked at commit; deleting a guardrail that is still a default no longer clears
 * it, it fails (the API answers 409 first).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    WITH missing AS (
      SELECT id AS workspace_id, organization_id, gen_random_uuid() AS guardrail_id FROM workspaces
       WHERE default_guardrail_id IS NULL
    ), created AS (
      INSERT INTO guardrails (id, organization_id, workspace_id, name, description,
                              enable_free_model_publication, enable_free_model_training, enable_paid_model_training)
      SELECT guardrail_id, organization_id, workspace_id, 'Default guardrail',
        'Restricts nothing. Edit it, or make another guardrail the workspace''s default (PATCH /workspaces/{ref}).',
        true, true, true
        FROM missing
      RETURNING id, workspace_id
    )
    UPDATE workspaces w SET default_guardrail_id = c.id FROM created c WHERE w.id = c.workspace_id;

    ALTER TABLE workspaces DROP CONSTRAINT workspaces_default_guardrail_fk;
    ALTER TABLE workspaces ADD CONSTRAINT workspaces_default_guardrail_fk
      FOREIGN KEY (default_guardrail_id) REFERENCES guardrails (id) DEFERRABLE INITIALLY DEFERRED;
    ALTER TABLE workspaces ALTER COLUMN default_guardrail_id SET NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE workspaces ALTER COLUMN default_guardrail_id DROP NOT NULL;
    ALTER TABLE workspaces DROP CONSTRAINT workspaces_default_guardrail_fk;
    ALTER TABLE workspaces ADD CONSTRAINT workspaces_default_guardrail_fk
      FOREIGN KEY (default_guardrail_id) REFERENCES guardrails (id) ON DELETE SET NULL;
  `);
};

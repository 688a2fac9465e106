import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * The vault (server/services/interns/vault): one vault per workspace (`intern_id` null, created on its first
 * write) and one per intern (created with the intern). Each vault has its own AES-256 data key,
 * stored only sealed by the gateway's master key. A secret's value is stored sealed by its vault's
 * data key; its fingerprint is an HMAC of the value under the same key.
 * Legacy rows (stored before host-bound storage, by provisioning imports) have no hosts and no
 * fingerprint; one may sit beside a current row of the same name, which then wins.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE vaults (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      intern_id uuid REFERENCES interns (id) ON DELETE CASCADE,
      sealed_data_key bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX vaults_one_per_workspace ON vaults (workspace_id) WHERE intern_id IS NULL;
    CREATE UNIQUE INDEX vaults_one_per_intern ON vaults (intern_id) WHERE intern_id IS NOT NULL;

    ALTER TABLE interns ADD CONSTRAINT interns_vault_fk FOREIGN KEY (vault_id) REFERENCES vaults (id)
       ON DELETE SET NULL;
    -- A borrowed vault that goes away (its intern was deleted) simply stops being attached.
    ALTER TABLE interns ADD CONSTRAINT interns_attached_vault_fk FOREIGN KEY (attached_vault_id) REFERENCES vaults (id)
       ON DELETE SET NULL;

    CREATE TABLE vault_secrets (
      vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
      -- Byte order: lists are ordered by name the same way whatever the database's locale.
      name text COLLATE "C" NOT NULL,
      legacy boolean NOT NULL DEFAULT false,
      hosts text[],
      fingerprint text,
      sealed_value bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (vault_id, name, legacy),
      CONSTRAINT vault_secrets_bound
        CHECK (legacy OR (hosts IS NOT NULL AND cardinality(hosts) > 0 AND fingerprint IS NOT NULL)),
      CONSTRAINT vault_secrets_legacy_unbound CHECK (NOT legacy OR (hosts IS NULL AND fingerprint IS NULL))
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE vault_secrets;
    ALTER TABLE interns DROP CONSTRAINT interns_attached_vault_fk, DROP CONSTRAINT interns_vault_fk;
    DROP TABLE vaults;
  `);
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Intern records (server/services/interns). `provision_generation` counts provisioning attempts: a
 * background boot writes its progress and outcome only while its generation is still the
 * intern's, so a suspend or delete that happened meanwhile wins. An intern's own API key is an
 * `api_keys` row with `intern_id` set; the scope check confines such a key to that intern, and the
 * key goes with the intern. Each reveal of a daemon token is kept in `intern_daemon_reveals`
 * (who, which intern, when; never the token).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE interns (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      instructions text,
      model text,
      status text NOT NULL CHECK (status IN ('queued', 'provisioning', 'running', 'failed', 'stopped', 'destroying',
                                             'destroy_failed')),
      hostname text,
      vault_id uuid,
      attached_vault_id uuid,
      last_failure_message text,
      progress_label text,
      progress_step integer,
      progress_total integer,
      provision_generation integer NOT NULL DEFAULT 0,
      creator_key_hash char(64) NOT NULL,
      creator_user_id text,
      -- Milliseconds, as rendered: the list cursor carries created_at as text and must compare equal.
      created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- Names are unique per creator (member, or the key for keys without one) within a workspace.
    CREATE UNIQUE INDEX interns_name_per_creator
        ON interns (workspace_id, (COALESCE(creator_user_id, creator_key_hash)), name);
    CREATE INDEX interns_by_workspace ON interns (organization_id, workspace_id, created_at DESC, id DESC);

    ALTER TABLE api_keys ADD COLUMN intern_id uuid REFERENCES interns (id) ON DELETE CASCADE;
    CREATE INDEX api_keys_by_intern ON api_keys (intern_id) WHERE intern_id IS NOT NULL;

    CREATE TABLE intern_daemon_reveals (
      id bigserial PRIMARY KEY,
      organization_id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      intern_id uuid NOT NULL,
      caller_key_hash char(64) NOT NULL,
      revealed_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX intern_daemon_reveals_by_intern ON intern_daemon_reveals (intern_id, revealed_at DESC);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE intern_daemon_reveals;
    DROP INDEX api_keys_by_intern;
    ALTER TABLE api_keys DROP COLUMN intern_id;
    DROP TABLE interns;
  `);
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Files of a workspace. `location` says where the bytes are: `own` (the gateway's blob store, under
 * `blob_key`) or the provider that holds them (`openai`, `anthropic`), in which case `id` is the
 * provider's file id and the row keeps what the provider does not report (the detected type).
 * A row is written only after its bytes are stored, so every `own` row has its blob.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE files (
      location text NOT NULL CHECK (location IN ('own', 'openai', 'anthropic')),
      id text NOT NULL,
      organization_id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      filename text NOT NULL,
      mime_type text NOT NULL,
      size_bytes bigint NOT NULL CHECK (size_bytes > 0),
      blob_key text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (location, id),
      CHECK ((location = 'own') = (blob_key IS NOT NULL))
    );
    CREATE INDEX files_by_workspace ON files (workspace_id, location, created_at DESC, id DESC);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query("DROP TABLE IF EXISTS files");
};

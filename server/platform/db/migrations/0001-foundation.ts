import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/** Organizations, workspaces, API keys, workspace budgets and registered end users. */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE organizations (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      is_filtered_model_catalog_enabled boolean NOT NULL DEFAULT false,
      -- 'interns', 'private_endpoints'
      entitlements text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    );

    CREATE TABLE workspaces (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      slug text NOT NULL,
      description text,
      created_by text NOT NULL,
      default_guardrail_id uuid,
      default_image_model text,
      default_text_model text,
      default_provider_sort text,
      disabled_server_tools text[],
      include_byok_in_budgets boolean NOT NULL DEFAULT false,
      io_logging_api_key_ids text[],
      io_logging_sampling_rate numeric(5, 4) NOT NULL DEFAULT 1,
      is_data_discount_logging_enabled boolean NOT NULL DEFAULT false,
      is_observability_broadcast_enabled boolean NOT NULL DEFAULT false,
      is_observability_io_logging_enabled boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz,
      CONSTRAINT workspaces_slug_unique UNIQUE (organization_id, slug)
    );

    -- Only the SHA-256 of a key's secret is stored; it is also the key's public identifier.
    CREATE TABLE api_keys (
      hash char(64) PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      creator_user_id text,
      name text NOT NULL,
      label text NOT NULL,
      is_management boolean NOT NULL DEFAULT false,
      disabled boolean NOT NULL DEFAULT false,
      limit_micros bigint CHECK (limit_micros >= 0),
      limit_reset text CHECK (limit_reset IN ('daily', 'weekly', 'monthly')),
      include_byok_in_limit boolean NOT NULL DEFAULT false,
      expires_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    );
    CREATE INDEX api_keys_by_organization ON api_keys (organization_id, created_at DESC);

    CREATE TABLE workspace_budgets (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      "interval" text NOT NULL CHECK ("interval" IN ('daily', 'weekly', 'monthly', 'lifetime')),
      limit_micros bigint NOT NULL CHECK (limit_micros > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz,
      CONSTRAINT workspace_budgets_interval_unique UNIQUE (workspace_id, "interval")
    );

    CREATE TABLE end_users (
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      "user" text NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, "user")
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query("DROP TABLE end_users, workspace_budgets, api_keys, workspaces, organizations");
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Members, guardrails and their assignments, BYOK credentials, private endpoints, and the PKCE
 * authorization codes with the apps they name.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE members (
      id text PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      email text NOT NULL,
      first_name text,
      last_name text,
      role text NOT NULL CHECK (role IN ('org:admin', 'org:member')),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX members_email_unique ON members (organization_id, lower(email));

    CREATE TABLE guardrails (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      limit_micros bigint CHECK (limit_micros >= 0),
      reset_interval text CHECK (reset_interval IN ('daily', 'weekly', 'monthly')),
      include_byok_in_budgets boolean NOT NULL DEFAULT false,
      allowed_models text[],
      ignored_models text[],
      allowed_providers text[],
      ignored_providers text[],
      allowed_data_regions text[],
      enforce_zdr boolean,
      enforce_zdr_anthropic boolean,
      enforce_zdr_google boolean,
      enforce_zdr_openai boolean,
      enforce_zdr_other boolean,
      enforce_zdr_xai boolean,
      enable_free_model_publication boolean NOT NULL DEFAULT false,
      enable_free_model_training boolean NOT NULL DEFAULT false,
      enable_paid_model_training boolean NOT NULL DEFAULT false,
      content_filter_builtins jsonb NOT NULL DEFAULT '[]',
      content_filters jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    );
    CREATE INDEX guardrails_by_workspace ON guardrails (workspace_id, created_at DESC);

    -- A workspace's default guardrail; deleting the guardrail clears it.
    ALTER TABLE workspaces ADD CONSTRAINT workspaces_default_guardrail_fk
      FOREIGN KEY (default_guardrail_id) REFERENCES guardrails (id) ON DELETE SET NULL;

    CREATE TABLE guardrail_key_assignments (
      id uuid PRIMARY KEY,
      guardrail_id uuid NOT NULL REFERENCES guardrails (id) ON DELETE CASCADE,
      key_hash char(64) NOT NULL REFERENCES api_keys (hash) ON DELETE CASCADE,
      assigned_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT guardrail_key_assignments_unique UNIQUE (guardrail_id, key_hash)
    );
    CREATE INDEX guardrail_key_assignments_by_key ON guardrail_key_assignments (key_hash);

    CREATE TABLE guardrail_member_assignments (
      id uuid PRIMARY KEY,
      guardrail_id uuid NOT NULL REFERENCES guardrails (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
      assigned_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT guardrail_member_assignments_unique UNIQUE (guardrail_id, user_id)
    );
    CREATE INDEX guardrail_member_assignments_by_user ON guardrail_member_assignments (user_id);

    -- The provider key is stored only sealed (AES-256-GCM under the master key, bound to the row id).
    CREATE TABLE byok_credentials (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      provider text NOT NULL,
      name text,
      label text NOT NULL,
      sealed_key bytea NOT NULL,
      disabled boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX byok_credentials_by_workspace ON byok_credentials (workspace_id, provider, created_at DESC);

    CREATE TABLE private_endpoints (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      model_permaslug text NOT NULL,
      model_slug text NOT NULL,
      model_name text NOT NULL,
      provider_slug text NOT NULL,
      provider_name text NOT NULL,
      upstream_model_id text NOT NULL,
      base_url text,
      declared_region text CHECK (declared_region IN ('global', 'europe', 'us')),
      declared_zdr boolean NOT NULL DEFAULT false,
      pricing_prompt numeric,
      pricing_completion numeric,
      status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active')),
      validated_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    );
    CREATE INDEX private_endpoints_by_organization ON private_endpoints (organization_id, created_at DESC);

    -- Apps of the PKCE flow, one per organization and callback origin; app_id is their number.
    CREATE TABLE auth_apps (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      origin text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT auth_apps_origin_unique UNIQUE (organization_id, origin)
    );

    -- Only the SHA-256 of a code is stored; a code is single use (used_at) and short-lived.
    CREATE TABLE auth_codes (
      code_hash char(64) PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      app_id bigint NOT NULL REFERENCES auth_apps (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      creator_user_id text,
      callback_url text NOT NULL,
      code_challenge text,
      code_challenge_method text CHECK (code_challenge_method IN ('S256', 'plain')),
      limit_micros bigint CHECK (limit_micros >= 0),
      limit_reset text CHECK (limit_reset IN ('daily', 'weekly', 'monthly')),
      key_expires_at timestamptz,
      key_label text NOT NULL,
      spawn_agent text,
      spawn_cloud text,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX auth_codes_by_expiry ON auth_codes (expires_at);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE workspaces DROP CONSTRAINT workspaces_default_guardrail_fk;
    DROP TABLE auth_codes, auth_apps, private_endpoints, byok_credentials, guardrail_member_assignments,
      guardrail_key_assignments, guardrails, members;
  `);
};

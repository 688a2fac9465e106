import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Video jobs (server/services/videos). One row is both the job the API shows and the poller's queue entry:
 * the poller claims due jobs with `FOR UPDATE SKIP LOCKED` and a lease (`lease_owner`,
 * `lease_expires_at`) it renews while it works, so a job in flight when an instance dies is taken
 * over once the lease lapses. `request` holds what is sent to the provider until the provider has
 * accepted it (then it is cleared). A job is billed by one usage_ledger row (`api = 'video'`,
 * keyed by the job's `generation_id`); the unique index makes a second row for the same job
 * impossible, however many instances settle it. Money is NUMERIC USD.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE video_jobs (
      id text PRIMARY KEY,
      organization_id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      key_hash char(64) NOT NULL,
      member_user_id text,
      model_id text NOT NULL,
      endpoint_id text NOT NULL,
      provider_slug text NOT NULL,
      previous_job_id text,
      status text NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'cancelled', 'expired')),
      request jsonb,
      upstream_id text,
      generation_id text NOT NULL,
      seconds integer NOT NULL,
      resolution text,
      error text,
      estimate_usd numeric NOT NULL DEFAULT 0,
      reservation_id uuid,
      cost_usd numeric,
      is_byok boolean NOT NULL DEFAULT false,
      -- [{content_type, size}] per stored output, blobs under videos/<workspace>/<job>/<index>.
      outputs jsonb NOT NULL DEFAULT '[]',
      outputs_expire_at timestamptz,
      outputs_purged_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      deadline_at timestamptz NOT NULL,
      -- Consecutive failed polls, for the backoff; reset by every answer.
      failures integer NOT NULL DEFAULT 0,
      available_at timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_expires_at timestamptz
    );
    CREATE INDEX video_jobs_open ON video_jobs (available_at) WHERE status IN ('pending', 'in_progress');
    CREATE INDEX video_jobs_stored ON video_jobs (outputs_expire_at)
     WHERE outputs_expire_at IS NOT NULL AND outputs_purged_at IS NULL;
    CREATE UNIQUE INDEX usage_ledger_one_per_video_job ON usage_ledger (generation_id) WHERE api = 'video';
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX IF EXISTS usage_ledger_one_per_video_job;
    DROP TABLE IF EXISTS video_jobs;
  `);
};

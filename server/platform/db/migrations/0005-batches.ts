import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Batches: the batch with its running totals, and one row per item that is both the queue entry
 * and the stored result. Items are claimed with `FOR UPDATE SKIP LOCKED` and a lease
 * (`lease_owner`, `lease_expires_at`) that the running instance renews; a crashed instance's items
 * become claimable again when their lease lapses. An item's result, its ledger row, the spend
 * counters and the batch totals are written by one statement that only applies while the writer
 * still holds the item's lease, so an item is recorded and billed exactly once even when two
 * instances ran it. The ledger's unique batch-item index makes a second billing impossible.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE batches (
      id text PRIMARY KEY,
      organization_id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      key_hash char(64) NOT NULL,
      member_user_id text,
      endpoint text NOT NULL,
      model text NOT NULL,
      completion_window text NOT NULL DEFAULT '24h',
      provider_only jsonb,
      status text NOT NULL CHECK (status IN ('validating', 'in_progress', 'cancelling', 'completed', 'failed',
                                             'expired', 'cancelled')),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      finalized_at timestamptz,
      error_message text,
      error_code integer,
      total integer NOT NULL,
      completed integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      prompt_tokens bigint NOT NULL DEFAULT 0,
      completion_tokens bigint NOT NULL DEFAULT 0,
      reasoning_tokens bigint NOT NULL DEFAULT 0,
      cached_tokens bigint NOT NULL DEFAULT 0,
      cost_usd numeric NOT NULL DEFAULT 0,
      byok_cost_usd numeric NOT NULL DEFAULT 0,
      -- Worst-case cost per item, released from the batch's reservation as items settle.
      item_estimate_usd numeric NOT NULL DEFAULT 0,
      reservation_id uuid,
      idempotency_key text,
      request_hash text,
      upstream_provider text,
      upstream_batch_id text,
      results_purged_at timestamptz
    );
    CREATE UNIQUE INDEX batches_idempotency ON batches (key_hash, idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE INDEX batches_by_workspace ON batches (workspace_id, created_at DESC, id DESC);
    CREATE INDEX batches_active ON batches (status) WHERE status IN ('validating', 'in_progress', 'cancelling');
    CREATE INDEX batches_unpurged ON batches (created_at) WHERE results_purged_at IS NULL;

    CREATE TABLE batch_items (
      batch_id text NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
      idx integer NOT NULL,
      custom_id text NOT NULL,
      body jsonb,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done')),
      attempts integer NOT NULL DEFAULT 0,
      available_at timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_expires_at timestamptz,
      succeeded boolean,
      result jsonb,
      PRIMARY KEY (batch_id, idx)
    );
    CREATE INDEX batch_items_open ON batch_items (batch_id, available_at) WHERE state <> 'done';

    ALTER TABLE usage_ledger ADD COLUMN batch_id text;
    CREATE UNIQUE INDEX usage_ledger_one_per_batch_item ON usage_ledger (generation_id) WHERE batch_id IS NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX IF EXISTS usage_ledger_one_per_batch_item;
    ALTER TABLE usage_ledger DROP COLUMN IF EXISTS batch_id;
    DROP TABLE IF EXISTS batch_items;
    DROP TABLE IF EXISTS batches;
  `);
};

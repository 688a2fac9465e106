import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * The response cache (server/engine/response-cache): one row per cached answer, keyed by the
 * SHA-256 of its workspace, API, model, endpoint and canonical request, with the answer as it was
 * given and the counts and cost of the call that produced it. Nothing secret is in the key or the
 * row. The leased workers' sweep deletes expired rows and, past GATEWAY_CACHE_MAX_BYTES, the
 * oldest. The ledger marks the calls a cache entry answered, and what they saved.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE response_cache (
      key text PRIMARY KEY,
      workspace_id uuid NOT NULL,
      api text NOT NULL,
      endpoint_id text NOT NULL,
      answer text NOT NULL,
      prompt_tokens integer NOT NULL,
      completion_tokens integer NOT NULL,
      reasoning_tokens integer NOT NULL,
      cached_tokens integer NOT NULL,
      cache_write_tokens integer NOT NULL,
      cost_usd numeric NOT NULL,
      size_bytes integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX response_cache_by_expiry ON response_cache (expires_at);
    CREATE INDEX response_cache_by_age ON response_cache (created_at, key);
    ALTER TABLE usage_ledger ADD COLUMN cache_hit boolean NOT NULL DEFAULT false;
    ALTER TABLE usage_ledger ADD COLUMN cache_savings_usd numeric NOT NULL DEFAULT 0;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE usage_ledger DROP COLUMN cache_savings_usd;
    ALTER TABLE usage_ledger DROP COLUMN cache_hit;
    DROP TABLE response_cache;
  `);
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Inference: the model catalog (synchronized from GATEWAY_CONFIG at every start), the usage ledger
 * (one row per upstream call, never deleted), the per-period spend counters that budgets are
 * checked against, budget reservations of calls in flight, and the request counters of rate
 * limits and the free-model quota. Costs are exact decimals in USD (NUMERIC); budget limits stay
 * micro-dollar BIGINTs and are compared as `limit_micros / 1e6`.
 *
 * `gateway_admit` is the one admission step of an inference call, a single round trip: it counts
 * the request against the key's rate limit and free-model quota, then, under transaction-scoped
 * advisory locks of the workspace and the key, checks every budget layer against settled spend
 * plus live reservations plus the call's worst-case cost, and reserves that cost. Concurrent calls
 * of one key or workspace are serialized by the locks, so they cannot overspend together; a crashed
 * instance's reservations lapse at `expires_at` without any sweep.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE providers (
      slug text PRIMARY KEY,
      name text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('openai', 'anthropic')),
      base_url text NOT NULL,
      listed boolean NOT NULL DEFAULT true,
      synced_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE catalog_models (
      id text PRIMARY KEY,
      canonical_slug text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      created timestamptz NOT NULL,
      context_length integer NOT NULL,
      input_modalities text[] NOT NULL,
      output_modalities text[] NOT NULL,
      tokenizer text NOT NULL,
      instruct_type text,
      supported_voices text[],
      default_parameters jsonb,
      per_request_limits jsonb,
      expiration_date date,
      knowledge_cutoff text,
      is_moderated boolean NOT NULL DEFAULT false,
      listed boolean NOT NULL DEFAULT true,
      synced_at timestamptz NOT NULL DEFAULT now()
    );

    -- One provider deployment of a model; id is "<model id>@<provider slug>[/<tag>]".
    CREATE TABLE catalog_endpoints (
      id text PRIMARY KEY,
      model_id text NOT NULL REFERENCES catalog_models (id),
      provider_slug text NOT NULL REFERENCES providers (slug),
      tag text NOT NULL,
      upstream_model_id text NOT NULL,
      context_length integer NOT NULL,
      max_completion_tokens integer,
      max_prompt_tokens integer,
      quantization text,
      price_prompt numeric NOT NULL,
      price_completion numeric NOT NULL,
      price_image numeric NOT NULL DEFAULT 0,
      price_request numeric NOT NULL DEFAULT 0,
      supported_parameters text[] NOT NULL,
      supports_implicit_caching boolean NOT NULL DEFAULT false,
      region text NOT NULL CHECK (region IN ('global', 'europe', 'us')),
      zdr boolean NOT NULL DEFAULT false,
      -- 'allow' when the provider may retain or train on prompts.
      data_collection text NOT NULL DEFAULT 'deny' CHECK (data_collection IN ('allow', 'deny')),
      listed boolean NOT NULL DEFAULT true,
      synced_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX catalog_endpoints_by_model ON catalog_endpoints (model_id);

    -- No foreign keys: the ledger outlives keys, workspaces and catalog entries.
    CREATE TABLE usage_ledger (
      id uuid PRIMARY KEY,
      generation_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      organization_id uuid NOT NULL,
      key_hash char(64) NOT NULL,
      workspace_id uuid NOT NULL,
      member_user_id text,
      end_user text,
      session_id text,
      api text NOT NULL,
      model_id text NOT NULL,
      provider_slug text,
      endpoint_id text,
      status text NOT NULL CHECK (status IN ('success', 'error', 'cancelled')),
      http_status integer NOT NULL,
      streamed boolean NOT NULL DEFAULT false,
      prompt_tokens integer NOT NULL DEFAULT 0,
      completion_tokens integer NOT NULL DEFAULT 0,
      reasoning_tokens integer NOT NULL DEFAULT 0,
      cached_tokens integer NOT NULL DEFAULT 0,
      total_tokens integer NOT NULL DEFAULT 0,
      cost_usd numeric NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
      is_byok boolean NOT NULL DEFAULT false,
      is_free boolean NOT NULL DEFAULT false,
      -- Upstream time to the first byte of the answer, and to its end.
      latency_ms integer,
      generation_ms integer
    );
    CREATE INDEX usage_ledger_by_organization ON usage_ledger (organization_id, created_at);
    CREATE INDEX usage_ledger_by_key ON usage_ledger (key_hash, created_at);
    CREATE INDEX usage_ledger_by_endpoint ON usage_ledger (endpoint_id, created_at);

    -- Settled spend per scope and budget period; lifetime counters start at the epoch.
    CREATE TABLE usage_counters (
      scope text NOT NULL CHECK (scope IN ('key', 'workspace')),
      scope_id text NOT NULL,
      period text NOT NULL CHECK (period IN ('daily', 'weekly', 'monthly', 'lifetime')),
      period_start timestamptz NOT NULL,
      spent_usd numeric NOT NULL DEFAULT 0,
      byok_spent_usd numeric NOT NULL DEFAULT 0,
      PRIMARY KEY (scope, scope_id, period, period_start)
    );

    CREATE TABLE budget_reservations (
      id uuid PRIMARY KEY,
      key_hash char(64) NOT NULL,
      workspace_id uuid NOT NULL,
      amount_usd numeric NOT NULL CHECK (amount_usd >= 0),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX budget_reservations_by_key ON budget_reservations (key_hash);
    CREATE INDEX budget_reservations_by_workspace ON budget_reservations (workspace_id);

    -- Fixed-window request counts: "rate:<key hash>" per rate-limit window, "free:<key hash>" per UTC day.
    CREATE TABLE request_counters (
      name text NOT NULL,
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (name, window_start)
    );

    -- Input: {key_hash, workspace_id, rate_limit, rate_window_s, free, free_limit, estimate_usd,
    --         reservation_id, reservation_ttl_s, budgets: [{scope, scope_id, period, period_start,
    --         limit_usd, include_byok, label}]}
    -- Output: {admitted: true} or {admitted: false, refusal: "rate_limit" | "free_quota" | "budget",
    --          retry_after_s, label, remaining_usd}.
    CREATE FUNCTION gateway_admit(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
    DECLARE
      v_key text := p->>'key_hash';
      v_workspace uuid := (p->>'workspace_id')::uuid;
      v_estimate numeric := (p->>'estimate_usd')::numeric;
      v_window_s integer := greatest((p->>'rate_window_s')::integer, 1);
      v_start timestamptz;
      v_count integer;
      b record;
      spent numeric;
      held numeric;
    BEGIN
      -- What admission writes is short-lived (window counts, reservations that lapse anyway): it
      -- commits without waiting for the WAL flush, so the key's hot counter row and the advisory
      -- locks are not held for an fsync. A crash of PostgreSQL itself may forget the last moments
      -- of counts, loosening a limit briefly; nothing is ever overcharged.
      PERFORM set_config('synchronous_commit', 'off', true);
      IF (p->>'rate_limit')::integer > 0 THEN
        v_start := to_timestamp(floor(extract(epoch FROM now()) / v_window_s) * v_window_s);
        INSERT INTO request_counters AS c (name, window_start, count) VALUES ('rate:' || v_key, v_start, 1)
          ON CONFLICT (name, window_start) DO UPDATE SET count = c.count + 1
          RETURNING c.count INTO v_count;
        IF v_count > (p->>'rate_limit')::integer THEN
          RETURN jsonb_build_object('admitted', false, 'refusal', 'rate_limit',
            'retry_after_s', ceil(extract(epoch FROM v_start + make_interval(secs => v_window_s) - now())));
        END IF;
      END IF;

      IF (p->>'free')::boolean THEN
        v_start := date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
        INSERT INTO request_counters AS c (name, window_start, count) VALUES ('free:' || v_key, v_start, 1)
          ON CONFLICT (name, window_start) DO UPDATE SET count = c.count + 1
          RETURNING c.count INTO v_count;
        IF v_count > (p->>'free_limit')::integer THEN
          UPDATE request_counters SET count = count - 1 WHERE name = 'free:' || v_key AND window_start = v_start;
          RETURN jsonb_build_object('admitted', false, 'refusal', 'free_quota',
            'retry_after_s', ceil(extract(epoch FROM v_start + interval '1 day' - now())));
        END IF;
      END IF;

      IF jsonb_array_length(p->'budgets') > 0 THEN
        -- Workspace before key, always, so two calls never wait on each other in opposite order.
        PERFORM pg_advisory_xact_lock(hashtextextended('budget:workspace:' || v_workspace, 0));
        PERFORM pg_advisory_xact_lock(hashtextextended('budget:key:' || v_key, 0));
        FOR b IN SELECT * FROM jsonb_to_recordset(p->'budgets')
            AS x(scope text, scope_id text, period text, period_start timestamptz, limit_usd numeric,
                 include_byok boolean, label text)
        LOOP
          -- One statement, so settled spend and live reservations come from one snapshot: a
          -- settlement committing in between (counter up, reservation gone) cannot be missed.
          SELECT (SELECT coalesce(sum(c.spent_usd + CASE WHEN b.include_byok THEN c.byok_spent_usd ELSE 0 END), 0)
                    FROM usage_counters c
                   WHERE c.scope = b.scope AND c.scope_id = b.scope_id AND c.period = b.period
                     AND c.period_start = b.period_start),
                 (SELECT coalesce(sum(r.amount_usd), 0)
                    FROM budget_reservations r
                   WHERE r.expires_at > now()
                     AND CASE b.scope WHEN 'key' THEN r.key_hash = b.scope_id
                                      ELSE r.workspace_id::text = b.scope_id END)
            INTO spent, held;
          IF spent + held + v_estimate > b.limit_usd THEN
            RETURN jsonb_build_object('admitted', false, 'refusal', 'budget', 'label', b.label,
              'remaining_usd', greatest(b.limit_usd - spent - held, 0));
          END IF;
        END LOOP;
        INSERT INTO budget_reservations (id, key_hash, workspace_id, amount_usd, expires_at)
          VALUES ((p->>'reservation_id')::uuid, v_key, v_workspace, v_estimate,
                  now() + make_interval(secs => (p->>'reservation_ttl_s')::integer));
      END IF;
      RETURN jsonb_build_object('admitted', true);
    END
    $fn$;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP FUNCTION gateway_admit(jsonb);
    DROP TABLE request_counters, budget_reservations, usage_counters, usage_ledger, catalog_endpoints, catalog_models,
      providers;
  `);
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Request and token limits per minute of keys and workspaces (docs/api/limits.md), leased like
 * every other limited quantity (server/engine/admission/README.md):
 *
 * - `rate_limit_requests_per_minute` and `rate_limit_tokens_per_minute` on `api_keys` and
 *   `workspaces` (null: no such limit), what `svc_rate_limit` shows and sets;
 * - `usage_ledger.rate_limit`: the limit that refused a call with 429 (such a refusal is a ledger
 *   row of its own, with no provider and no cost), for the analytics dimension of that name;
 * - `gateway_lease_grant` learns quantities of kind `tokens` (counted in `request_counters` like
 *   requests, in whole tokens) and answers, with the amounts granted, what is `left` of each
 *   quantity once the grant is taken: the instance's view of what remains, for the
 *   `x-ratelimit-remaining-*` headers. Everything else is as migration 0015 wrote it.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE api_keys
      ADD COLUMN rate_limit_requests_per_minute integer CHECK (rate_limit_requests_per_minute > 0),
      ADD COLUMN rate_limit_tokens_per_minute integer CHECK (rate_limit_tokens_per_minute > 0);
    ALTER TABLE workspaces
      ADD COLUMN rate_limit_requests_per_minute integer CHECK (rate_limit_requests_per_minute > 0),
      ADD COLUMN rate_limit_tokens_per_minute integer CHECK (rate_limit_tokens_per_minute > 0);
    ALTER TABLE usage_ledger ADD COLUMN rate_limit text;

    -- Input: {owner, key_hash, workspace_id, lease_s, hold_s, quantities: [{quantity, window_start,
    --         window_end, kind: "requests" | "tokens" | "spend", scope, scope_id, period, need, want,
    --         limits: [{limit, include_byok, label}]}]}
    -- Output: {granted: true, amounts: [numeric per quantity], left: [numeric per quantity], expires_at, now}
    --         or {granted: false, index, remaining, label, retry_after_s}; amounts are decimal strings.
    -- All or nothing: one quantity short of its need refuses the whole grant.
    CREATE OR REPLACE FUNCTION gateway_lease_grant(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
    DECLARE
      q record;
      l record;
      i integer := 0;
      v_used numeric;
      v_byok numeric;
      v_held numeric;
      v_leased numeric;
      v_remaining numeric;
      v_layer numeric;
      v_label text;
      v_amount numeric;
      v_amounts jsonb := '[]'::jsonb;
      v_left jsonb := '[]'::jsonb;
      v_expires timestamptz := now() + make_interval(secs => (p->>'lease_s')::numeric);
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('budget:workspace:' || (p->>'workspace_id'), 0));
      -- Null when every quantity is the workspace's (a top-up of a workspace's quantities alone).
      IF p->>'key_hash' IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('budget:key:' || (p->>'key_hash'), 0));
      END IF;
      FOR q IN SELECT * FROM jsonb_to_recordset(p->'quantities')
          AS x(quantity text, window_start timestamptz, window_end timestamptz, kind text, scope text, scope_id text,
               period text, need numeric, want numeric, limits jsonb)
      LOOP
        -- One statement: settled, reserved and leased from one snapshot.
        IF q.kind IN ('requests', 'tokens') THEN
          SELECT (SELECT coalesce(max(c.count), 0) FROM request_counters c
                   WHERE c.name = q.quantity AND c.window_start = q.window_start),
                 0, 0,
                 (SELECT coalesce(sum(a.granted), 0) FROM admission_leases a
                   WHERE a.quantity = q.quantity AND a.window_start = q.window_start AND a.held_until > now())
            INTO v_used, v_byok, v_held, v_leased;
        ELSE
          SELECT (SELECT coalesce(max(c.spent_usd), 0) FROM usage_counters c
                   WHERE c.scope = q.scope AND c.scope_id = q.scope_id AND c.period = q.period
                     AND c.period_start = q.window_start),
                 (SELECT coalesce(max(c.byok_spent_usd), 0) FROM usage_counters c
                   WHERE c.scope = q.scope AND c.scope_id = q.scope_id AND c.period = q.period
                     AND c.period_start = q.window_start),
                 (SELECT coalesce(sum(r.amount_usd), 0) FROM budget_reservations r
                   WHERE r.expires_at > now()
                     AND CASE q.scope WHEN 'key' THEN r.key_hash = q.scope_id
                                      ELSE r.workspace_id::text = q.scope_id END),
                 (SELECT coalesce(sum(a.granted), 0) FROM admission_leases a
                   WHERE a.quantity = q.quantity AND a.window_start = q.window_start AND a.held_until > now())
            INTO v_used, v_byok, v_held, v_leased;
        END IF;
        v_remaining := NULL;
        -- The tightest of the quantity's limits binds, and names the refusal.
        FOR l IN SELECT * FROM jsonb_to_recordset(q.limits) AS y("limit" numeric, include_byok boolean, label text) LOOP
          v_layer := l."limit" - v_used - CASE WHEN l.include_byok THEN v_byok ELSE 0 END - v_held - v_leased;
          IF v_remaining IS NULL OR v_layer < v_remaining THEN
            v_remaining := v_layer;
            v_label := l.label;
          END IF;
        END LOOP;
        v_remaining := greatest(coalesce(v_remaining, 0), 0);
        IF v_remaining < q.need THEN
          RETURN jsonb_build_object('granted', false, 'index', i, 'remaining', v_remaining::text, 'label', v_label,
            'retry_after_s', CASE WHEN q.window_end IS NULL THEN NULL
                                  ELSE ceil(extract(epoch FROM q.window_end - now())) END);
        END IF;
        -- A quarter of what is left at most, so instances share what remains; the exact need
        -- when that is less (per-call grants near the limit).
        v_amount := greatest(q.need, least(q.want, v_remaining / 4));
        -- Whole requests and tokens, whole nano-dollars (the book's units), so nothing granted is stranded.
        v_amount := greatest(q.need, trunc(v_amount, CASE WHEN q.kind = 'spend' THEN 9 ELSE 0 END));
        v_amounts := v_amounts || to_jsonb(v_amount::text);
        v_left := v_left || to_jsonb((v_remaining - v_amount)::text);
        i := i + 1;
      END LOOP;

      INSERT INTO admission_leases AS a (quantity, window_start, owner, granted, expires_at, held_until)
      SELECT x.quantity, x.window_start, p->>'owner', (v_amounts->>(x.n::integer - 1))::numeric,
             least(v_expires, coalesce(x.window_end, v_expires)),
             least(v_expires, coalesce(x.window_end, v_expires)) + make_interval(secs => (p->>'hold_s')::numeric)
        FROM ROWS FROM (jsonb_to_recordset(p->'quantities')
                          AS (quantity text, window_start timestamptz, window_end timestamptz))
             WITH ORDINALITY AS x(quantity, window_start, window_end, n)
      ON CONFLICT (quantity, window_start, owner) DO UPDATE
        -- A lapsed row's amount no longer counts anywhere; it is not carried over.
        SET granted = CASE WHEN a.held_until > now() THEN a.granted ELSE 0 END + EXCLUDED.granted,
            expires_at = greatest(a.expires_at, EXCLUDED.expires_at),
            held_until = greatest(a.held_until, EXCLUDED.held_until);
      RETURN jsonb_build_object('granted', true, 'amounts', v_amounts, 'left', v_left,
                                'expires_at', v_expires, 'now', now());
    END
    $fn$;
  `);
};

/**
 * The columns go; the function stays as it is: it answers the inputs of migration 0015's version
 * exactly as that one did (its `left` is an addition an older reader ignores).
 */
export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE usage_ledger DROP COLUMN rate_limit;
    ALTER TABLE workspaces DROP COLUMN rate_limit_requests_per_minute, DROP COLUMN rate_limit_tokens_per_minute;
    ALTER TABLE api_keys DROP COLUMN rate_limit_requests_per_minute, DROP COLUMN rate_limit_tokens_per_minute;
  `);
};

import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Admission from leases (server/engine/admission/README.md). Every limited quantity — a key's rate-limit window
 * (`rate:<key hash>`), its free-model day (`free:<key hash>`), and each spend counter a budget
 * layer reads (`key:<hash>:<period>`, `workspace:<id>:<period>`) — is leased to gateway instances in
 * slices. The invariant, per quantity and for every limit on it:
 *
 *     settled + live reservations (batches, videos) + live leases ≤ limit
 *
 * `gateway_lease_grant` is the only writer that raises the left side; it runs under the same
 * advisory locks (workspace, then key) as `gateway_admit` and reads every term of the sum in one
 * statement, so a settlement committing in between (leased down, settled up by the same amount)
 * is seen wholly or not at all. Settlement (server/engine/usage/settlement-writer.ts) only moves amounts
 * from a lease to the settled counters, which never raises the sum.
 *
 * A lease is usable by its owner until `expires_at` and counted against the limit until
 * `held_until` (later by the longest a call admitted under it may still run): a crashed owner's
 * unused slice stays reserved until then and lapses without any sweep.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE admission_leases (
      quantity text NOT NULL,
      window_start timestamptz NOT NULL,
      owner text NOT NULL,
      -- Requests for the rate and free counters, USD for spend counters; never negative.
      granted numeric NOT NULL CHECK (granted >= 0),
      expires_at timestamptz NOT NULL,
      held_until timestamptz NOT NULL,
      PRIMARY KEY (quantity, window_start, owner)
    );
    CREATE INDEX admission_leases_by_owner ON admission_leases (owner);

    -- Input: {owner, key_hash, workspace_id, lease_s, hold_s, quantities: [{quantity, window_start,
    --         window_end, kind: "requests" | "spend", scope, scope_id, period, need, want,
    --         limits: [{limit, include_byok, label}]}]}
    -- Output: {granted: true, amounts: [numeric per quantity], expires_at, now} or
    --         {granted: false, index, remaining, label, retry_after_s}; amounts are decimal strings.
    -- All or nothing: one quantity short of its need refuses the whole grant.
    CREATE FUNCTION gateway_lease_grant(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
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
      v_expires timestamptz := now() + make_interval(secs => (p->>'lease_s')::numeric);
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('budget:workspace:' || (p->>'workspace_id'), 0));
      -- Null when every quantity is the workspace's (a top-up of a workspace budget alone).
      IF p->>'key_hash' IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('budget:key:' || (p->>'key_hash'), 0));
      END IF;
      FOR q IN SELECT * FROM jsonb_to_recordset(p->'quantities')
          AS x(quantity text, window_start timestamptz, window_end timestamptz, kind text, scope text, scope_id text,
               period text, need numeric, want numeric, limits jsonb)
      LOOP
        -- One statement: settled, reserved and leased from one snapshot.
        IF q.kind = 'requests' THEN
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
        -- Whole requests, whole nano-dollars (the book's unit), so nothing granted is stranded.
        v_amount := greatest(q.need, trunc(v_amount, CASE WHEN q.kind = 'requests' THEN 0 ELSE 9 END));
        v_amounts := v_amounts || to_jsonb(v_amount::text);
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
      RETURN jsonb_build_object('granted', true, 'amounts', v_amounts, 'expires_at', v_expires, 'now', now());
    END
    $fn$;

    -- gateway_admit (exact per-call reservations: batch and video submissions) now counts live
    -- leases too, and takes the advisory locks before the request counters, as grants do.
    CREATE OR REPLACE FUNCTION gateway_admit(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
    DECLARE
      v_key text := p->>'key_hash';
      v_workspace uuid := (p->>'workspace_id')::uuid;
      v_estimate numeric := (p->>'estimate_usd')::numeric;
      v_window_s integer := greatest((p->>'rate_window_s')::integer, 1);
      v_start timestamptz;
      v_count integer;
      v_leased numeric;
      b record;
      spent numeric;
      held numeric;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('budget:workspace:' || v_workspace, 0));
      PERFORM pg_advisory_xact_lock(hashtextextended('budget:key:' || v_key, 0));
      IF (p->>'rate_limit')::integer > 0 THEN
        v_start := to_timestamp(floor(extract(epoch FROM now()) / v_window_s) * v_window_s);
        INSERT INTO request_counters AS c (name, window_start, count) VALUES ('rate:' || v_key, v_start, 1)
          ON CONFLICT (name, window_start) DO UPDATE SET count = c.count + 1
          RETURNING c.count INTO v_count;
        SELECT coalesce(sum(granted), 0) INTO v_leased FROM admission_leases
         WHERE quantity = 'rate:' || v_key AND window_start = v_start AND held_until > now();
        IF v_count + v_leased > (p->>'rate_limit')::integer THEN
          UPDATE request_counters SET count = count - 1 WHERE name = 'rate:' || v_key AND window_start = v_start;
          RETURN jsonb_build_object('admitted', false, 'refusal', 'rate_limit',
            'retry_after_s', ceil(extract(epoch FROM v_start + make_interval(secs => v_window_s) - now())));
        END IF;
      END IF;

      IF (p->>'free')::boolean THEN
        v_start := date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
        INSERT INTO request_counters AS c (name, window_start, count) VALUES ('free:' || v_key, v_start, 1)
          ON CONFLICT (name, window_start) DO UPDATE SET count = c.count + 1
          RETURNING c.count INTO v_count;
        SELECT coalesce(sum(granted), 0) INTO v_leased FROM admission_leases
         WHERE quantity = 'free:' || v_key AND window_start = v_start AND held_until > now();
        IF v_count + v_leased > (p->>'free_limit')::integer THEN
          UPDATE request_counters SET count = count - 1 WHERE name = 'free:' || v_key AND window_start = v_start;
          RETURN jsonb_build_object('admitted', false, 'refusal', 'free_quota',
            'retry_after_s', ceil(extract(epoch FROM v_start + interval '1 day' - now())));
        END IF;
      END IF;

      IF jsonb_array_length(p->'budgets') > 0 THEN
        FOR b IN SELECT * FROM jsonb_to_recordset(p->'budgets')
            AS x(scope text, scope_id text, period text, period_start timestamptz, limit_usd numeric,
                 include_byok boolean, label text)
        LOOP
          SELECT (SELECT coalesce(sum(c.spent_usd + CASE WHEN b.include_byok THEN c.byok_spent_usd ELSE 0 END), 0)
                    FROM usage_counters c
                   WHERE c.scope = b.scope AND c.scope_id = b.scope_id AND c.period = b.period
                     AND c.period_start = b.period_start),
                 (SELECT coalesce(sum(r.amount_usd), 0)
                    FROM budget_reservations r
                   WHERE r.expires_at > now()
                     AND CASE b.scope WHEN 'key' THEN r.key_hash = b.scope_id
                                      ELSE r.workspace_id::text = b.scope_id END)
                 + (SELECT coalesce(sum(a.granted), 0) FROM admission_leases a
                     WHERE a.quantity = b.scope || ':' || b.scope_id || ':' || b.period
                       AND a.window_start = b.period_start AND a.held_until > now())
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
  await context.sequelize.query(`DROP FUNCTION gateway_lease_grant(jsonb); DROP TABLE admission_leases;`);
};

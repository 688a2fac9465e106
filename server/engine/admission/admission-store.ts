import { QueryTypes, type Sequelize } from "sequelize";
import type { Consumption } from "../usage/usage-store.js";
import type { Quantity, Refusal } from "./quantities.js";

/**
 * The central side of admission: `gateway_lease_grant` (migrations 0015, 0028) and the return of
 * unused slices, and the exact admission of `gateway_admit` (migrations 0003, 0015). Amounts cross
 * this boundary as exact decimal strings; the lease book converts them.
 */
export interface GrantRequest {
  quantity: Quantity;
  /** The least this grant must give (0 for a background top-up), in the quantity's unit. */
  need: string;
  /** What the instance would like to hold. */
  want: string;
}

/**
 * `left`: what each quantity still had once the grant was taken, in the central view (other
 * instances' slices counted as used).
 */
export type GrantResult =
  | { granted: true; amounts: string[]; left: string[]; expiresAt: Date; dbNow: Date }
  | { granted: false; index: number; remaining: string; label: string; retryAfterS: number | null };

interface GrantRow {
  result:
    | { granted: true; amounts: string[]; left: string[]; expires_at: string; now: string }
    | { granted: false; index: number; remaining: string; label: string; retry_after_s: number | null };
}

export interface LeaseTiming {
  /** How long a grant is usable by its owner. */
  leaseS: number;
  /** How much longer it stays counted: the longest a call admitted under it may still run. */
  holdS: number;
}

export async function grantLeases(
  sequelize: Sequelize,
  owner: string,
  timing: LeaseTiming,
  requests: readonly GrantRequest[],
): Promise<GrantResult> {
  const [row] = await sequelize.query<GrantRow>("SELECT gateway_lease_grant(:input::jsonb) AS result", {
    type: QueryTypes.SELECT,
    replacements: {
      input: JSON.stringify({
        owner,
        key_hash: requests.find((r) => r.quantity.keyHash !== null)?.quantity.keyHash ?? null,
        workspace_id: requests[0]!.quantity.workspaceId,
        lease_s: timing.leaseS,
        hold_s: timing.holdS,
        quantities: requests.map(({ quantity: q, need, want }) => ({
          quantity: q.name,
          window_start: q.windowStart.toISOString(),
          window_end: q.windowEnd?.toISOString() ?? null,
          kind: q.kind,
          scope: q.scope,
          scope_id: q.scopeId,
          period: q.period,
          need,
          want,
          limits: q.limits.map((l) => ({ limit: l.limit, include_byok: l.includeByok, label: l.label })),
        })),
      }),
    },
  });
  const result = row!.result;
  if (!result.granted)
    return {
      granted: false,
      index: result.index,
      remaining: result.remaining,
      label: result.label,
      retryAfterS: result.retry_after_s,
    };
  return {
    granted: true,
    amounts: result.amounts,
    left: result.left,
    expiresAt: new Date(result.expires_at),
    dbNow: new Date(result.now),
  };
}

export interface Returned {
  quantity: Quantity;
  amount: string;
}

/**
 * The central side as the lease book sees it, for one owner: grants, returns and the drop at
 * shutdown. `leaseStoreOf` is the database's; the lease book's table test gives it one in memory.
 */
export interface LeaseStore {
  grant(requests: readonly GrantRequest[]): Promise<GrantResult>;
  giveBack(returned: readonly Returned[]): Promise<void>;
  /** Settles what calls without a ledger row of the settlement writer used (batch items' rate limits). */
  consume(consumptions: readonly Consumption[]): Promise<void>;
  dropAll(): Promise<void>;
}

export function leaseStoreOf(sequelize: Sequelize, owner: string, timing: LeaseTiming): LeaseStore {
  return {
    grant: (requests) => grantLeases(sequelize, owner, timing, requests),
    giveBack: (returned) => returnLeases(sequelize, owner, returned),
    consume: (consumptions) => consumeLeases(sequelize, owner, consumptions),
    dropAll: () => dropLeases(sequelize, owner),
  };
}

/**
 * Moves what was used from this owner's leases to the request counters, as the settlement
 * statement does for a ledger row's consumptions (usage-store.ts), for request and token counters
 * only (`rate:…`, `free:…`): a batch item's ledger row is written with its result
 * (batch-store-settlement.ts), its budget was reserved with its batch.
 */
export async function consumeLeases(
  sequelize: Sequelize,
  owner: string,
  consumptions: readonly Consumption[],
): Promise<void> {
  if (consumptions.length === 0) return;
  await sequelize.query(
    `WITH used AS (
       SELECT u.quantity, u.window_start, sum(u.amount) AS amount
         FROM unnest($quantities::text[], $starts::timestamptz[], $amounts::numeric[])
           AS u(quantity, window_start, amount)
        WHERE u.quantity LIKE 'rate:%' OR u.quantity LIKE 'free:%'
        GROUP BY u.quantity, u.window_start
     ), leases AS (
       UPDATE admission_leases a SET granted = greatest(a.granted - used.amount, 0)
         FROM used WHERE a.owner = $owner AND a.quantity = used.quantity AND a.window_start = used.window_start
     )
     INSERT INTO request_counters AS c (name, window_start, count)
     SELECT quantity, window_start, amount::integer FROM used ORDER BY quantity, window_start
     ON CONFLICT (name, window_start) DO UPDATE SET count = c.count + EXCLUDED.count`,
    {
      bind: {
        owner,
        quantities: consumptions.map((c) => c.quantity),
        starts: consumptions.map((c) => c.windowStart.toISOString()),
        amounts: consumptions.map((c) => c.amount),
      },
    },
  );
}

/** Gives unused slices back, so other instances can be granted them at once. */
export async function returnLeases(sequelize: Sequelize, owner: string, returned: readonly Returned[]): Promise<void> {
  if (returned.length === 0) return;
  await sequelize.query(
    `UPDATE admission_leases a SET granted = greatest(a.granted - r.amount, 0)
       FROM unnest($quantities::text[], $starts::timestamptz[], $amounts::numeric[])
         AS r(quantity, window_start, amount)
      WHERE a.owner = $owner AND a.quantity = r.quantity AND a.window_start = r.window_start`,
    {
      bind: {
        owner,
        quantities: returned.map((r) => r.quantity.name),
        starts: returned.map((r) => r.quantity.windowStart.toISOString()),
        amounts: returned.map((r) => r.amount),
      },
    },
  );
}

/** Drops every lease of this owner (SIGTERM, after settlement has drained: what is left is unused). */
export async function dropLeases(sequelize: Sequelize, owner: string): Promise<void> {
  await sequelize.query("DELETE FROM admission_leases WHERE owner = $owner", { bind: { owner } });
}

/** What gateway_admit answers. */
export interface Verdict {
  admitted: boolean;
  refusal?: Refusal;
  retry_after_s?: number;
  label?: string;
  remaining_usd?: string | number;
}

/** One exact admission: gateway_admit's verdict on `input` (exact-admission.ts builds it). */
export async function gatewayAdmit(sequelize: Sequelize, input: object): Promise<Verdict> {
  const [row] = await sequelize.query<{ verdict: Verdict }>("SELECT gateway_admit(:input::jsonb) AS verdict", {
    type: QueryTypes.SELECT,
    replacements: { input: JSON.stringify(input) },
  });
  return row!.verdict;
}

import type { Sequelize } from "sequelize";
import type { Interval } from "../money/budget-periods.js";
import { addUsd } from "../money/money.js";
import { currentPeriodStart, type BudgetLayer } from "./budget-layers.js";
import { readCounters, requestCount } from "./usage-store.js";

/**
 * Reads of the settled spend that settleCall (usage-store.ts) adds up in usage_counters, and of
 * the free-model request counter that gateway_admit keeps. Reservations of calls in flight are not
 * spend: they only hold budget room during admission.
 */
export interface Spend {
  /** Spend billed by the gateway (decimal USD). */
  paidUsd: string;
  /** Spend on the caller's own provider keys (decimal USD). */
  byokUsd: string;
}

export type PeriodSpend = Record<Interval, Spend>;

export const PERIODS: readonly Interval[] = ["daily", "weekly", "monthly", "lifetime"];

const NO_SPEND: Spend = { paidUsd: "0", byokUsd: "0" };
export const NO_PERIOD_SPEND: PeriodSpend = {
  daily: NO_SPEND,
  weekly: NO_SPEND,
  monthly: NO_SPEND,
  lifetime: NO_SPEND,
};

/** One usage_counters row, by its primary key. */
export interface CounterRef {
  scope: "key" | "workspace";
  scopeId: string;
  period: Interval;
  periodStart: Date;
}

const refId = (ref: CounterRef): string =>
  `${ref.scope}\u0000${ref.scopeId}\u0000${ref.period}\u0000${ref.periodStart.toISOString()}`;

/** Counters read in one round trip; a counter without a row is zero, one never read is an error. */
export class SpendIndex {
  constructor(private readonly spend: ReadonlyMap<string, Spend>) {}

  get(ref: CounterRef): Spend {
    const found = this.spend.get(refId(ref));
    if (!found) throw new Error(`usage counter ${ref.scope}/${ref.period} was not read`);
    return found;
  }

  /** The four current-period counters of one scope. */
  periods(scope: CounterRef["scope"], scopeId: string, now: Date): PeriodSpend {
    const of = (period: Interval) => this.get({ scope, scopeId, period, periodStart: currentPeriodStart(period, now) });
    return { daily: of("daily"), weekly: of("weekly"), monthly: of("monthly"), lifetime: of("lifetime") };
  }
}

/** The counters of the periods that contain `now`, one per period. */
export function currentPeriodRefs(scope: CounterRef["scope"], scopeId: string, now: Date): CounterRef[] {
  return PERIODS.map((period) => ({ scope, scopeId, period, periodStart: currentPeriodStart(period, now) }));
}

export async function readSpend(sequelize: Sequelize, refs: readonly CounterRef[]): Promise<SpendIndex> {
  const spend = await readCounters(sequelize, refs);
  return new SpendIndex(new Map(refs.map((ref, i) => [refId(ref), spend[i]!])));
}

/** What counts against a limit: the paid spend, plus BYOK spend when the limit includes it. */
export function countedSpend(spend: Spend, includeByok: boolean): string {
  return includeByok ? addUsd(spend.paidUsd, spend.byokUsd) : spend.paidUsd;
}

/** Settled spend of one budget layer in its current period, exactly as gateway_admit sums it. */
export function layerSpendUsd(layer: BudgetLayer, index: SpendIndex): string {
  return countedSpend(index.get(layer), layer.includeByok);
}

/** A key's spend in the daily, weekly, monthly and lifetime periods that contain `now`. */
export async function keyUsage(sequelize: Sequelize, keyHash: string, now: Date): Promise<PeriodSpend> {
  return (await readSpend(sequelize, currentPeriodRefs("key", keyHash, now))).periods("key", keyHash, now);
}

/** keyUsage of a page of keys in one round trip. */
export async function keysUsage(
  sequelize: Sequelize,
  keyHashes: readonly string[],
  now: Date,
): Promise<Map<string, PeriodSpend>> {
  const index = await readSpend(
    sequelize,
    keyHashes.flatMap((hash) => currentPeriodRefs("key", hash, now)),
  );
  return new Map(keyHashes.map((hash) => [hash, index.periods("key", hash, now)]));
}

/** Start of the UTC day: the window of the free-model quota. */
export function freeQuotaWindow(now: Date): Date {
  return currentPeriodStart("daily", now);
}

/** Free-model requests the key made today (UTC), as counted by gateway_admit. */
export async function freeModelRequestsToday(sequelize: Sequelize, keyHash: string, now: Date): Promise<number> {
  return requestCount(sequelize, `free:${keyHash}`, freeQuotaWindow(now));
}

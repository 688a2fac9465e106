import type { AnalyticsRow } from "../types.js";

/**
 * From rows of POST /analytics/query (`{bucket, <dimension>, cost_usd, requests, cache_savings_usd}`) to what the
 * overview draws: every bucket of the period (UTC, weeks from Monday, as the gateway buckets
 * them), one series per group, the largest groups first and the rest summed as "Other".
 */
export type Granularity = "day" | "week" | "month";

const isoDay = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** Each period: its buckets, and how a bucket is named (`bucketLabel`, from its start in Unix seconds). */
export const PERIODS: Record<
  Granularity,
  { label: string; buckets: number; span: string; bucketLabel: (seconds: number) => string }
> = {
  day: { label: "Daily", buckets: 30, span: "the last 30 days", bucketLabel: isoDay },
  week: {
    label: "Weekly",
    buckets: 12,
    span: "the last 12 weeks",
    bucketLabel: (seconds) => `week of ${isoDay(seconds)}`,
  },
  month: {
    label: "Monthly",
    buckets: 12,
    span: "the last 12 months",
    bucketLabel: (seconds) => isoDay(seconds).slice(0, 7),
  },
};

/** The start (UTC) of the bucket holding `date`. */
export function bucketStart(date: Date, granularity: Granularity): Date {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  if (granularity === "day") return day;
  if (granularity === "week") return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}

function addBuckets(start: Date, granularity: Granularity, n: number): Date {
  if (granularity === "month") return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
  return new Date(start.getTime() + n * (granularity === "week" ? 7 : 1) * 86_400_000);
}

/** The period's bucket starts, oldest first, ending with the current bucket. */
export function periodBuckets(granularity: Granularity, now: Date): Date[] {
  const last = bucketStart(now, granularity);
  const count = PERIODS[granularity].buckets;
  return Array.from({ length: count }, (_, i) => addBuckets(last, granularity, i - (count - 1)));
}

export interface GroupSeries {
  /** The dimension's value ("" when the ledger has none). */
  group: string;
  label: string;
  cost: number[];
  requests: number[];
  totalCost: number;
  totalRequests: number;
  /** What the response cache's hits saved (their original calls' cost). */
  totalSaved: number;
}

export interface OverviewSeries {
  /** Bucket starts, Unix seconds. */
  x: number[];
  /** What the charts draw: at most eight series. */
  groups: GroupSeries[];
  /** Every group, largest first, for the totals table. */
  all: GroupSeries[];
}

const MAX_SERIES = 8;
export const OTHER = "Other";

export function buildSeries(
  rows: AnalyticsRow[],
  dimension: string,
  buckets: Date[],
  labelOf: (group: string) => string,
): OverviewSeries {
  const index = new Map(buckets.map((bucket, i) => [bucket.getTime(), i]));
  const byGroup = new Map<string, GroupSeries>();
  for (const row of rows) {
    const at = typeof row.bucket === "string" ? index.get(Date.parse(row.bucket)) : undefined;
    if (at === undefined) continue;
    const value = row[dimension];
    const group = value === null || value === undefined ? "" : String(value);
    let series = byGroup.get(group);
    if (!series)
      byGroup.set(group, (series = emptySeries(group, group === "" ? "(none)" : labelOf(group), buckets.length)));
    const cost = numberOf(row.cost_usd);
    const requests = numberOf(row.requests);
    series.cost[at] = series.cost[at]! + cost;
    series.requests[at] = series.requests[at]! + requests;
    series.totalCost += cost;
    series.totalRequests += requests;
    series.totalSaved += numberOf(row.cache_savings_usd);
  }
  const ranked = [...byGroup.values()].sort(
    (a, b) => b.totalCost - a.totalCost || b.totalRequests - a.totalRequests || a.label.localeCompare(b.label),
  );
  const groups = ranked.slice(0, MAX_SERIES - 1);
  const rest = ranked.slice(MAX_SERIES - 1);
  if (rest.length === 1) groups.push(rest[0]!);
  else if (rest.length > 1) {
    const other = emptySeries(OTHER, `${OTHER} (${rest.length})`, buckets.length);
    for (const series of rest) {
      series.cost.forEach((v, i) => (other.cost[i] = other.cost[i]! + v));
      series.requests.forEach((v, i) => (other.requests[i] = other.requests[i]! + v));
      other.totalCost += series.totalCost;
      other.totalRequests += series.totalRequests;
      other.totalSaved += series.totalSaved;
    }
    groups.push(other);
  }
  return { x: buckets.map((bucket) => bucket.getTime() / 1000), groups, all: ranked };
}

function emptySeries(group: string, label: string, length: number): GroupSeries {
  return {
    group,
    label,
    cost: new Array<number>(length).fill(0),
    requests: new Array<number>(length).fill(0),
    totalCost: 0,
    totalRequests: 0,
    totalSaved: 0,
  };
}

function numberOf(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/**
 * Reset boundaries of limits and budgets, all in UTC: days start at midnight, weeks on Monday,
 * months on the first. `lifetime` never resets.
 *
 * @module
 */

export type Interval = "daily" | "weekly" | "monthly" | "lifetime";

/** Start of the period that contains `now`; null for lifetime. */
export function periodStart(interval: Interval, now: Date): Date | null {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  switch (interval) {
    case "daily":
      return new Date(day);
    case "weekly":
      return new Date(day - ((now.getUTCDay() + 6) % 7) * 86_400_000);
    case "monthly":
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    case "lifetime":
      return null;
  }
}

/** When the period that contains `now` ends; null for lifetime. */
export function nextReset(interval: Interval, now: Date): Date | null {
  const start = periodStart(interval, now);
  if (!start) return null;
  switch (interval) {
    case "daily":
      return new Date(start.getTime() + 86_400_000);
    case "weekly":
      return new Date(start.getTime() + 7 * 86_400_000);
    default:
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

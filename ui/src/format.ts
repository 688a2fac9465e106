/** How the console writes numbers, money and times: one place, so every page agrees. */
const usdFormat = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
});
const countFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

export function usd(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : usdFormat.format(value);
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : countFormat.format(value);
}

/** An API timestamp in UTC, to the minute (the gateway's budgets and buckets are UTC). */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function date(iso: string | null | undefined): string {
  if (!iso) return "—";
  const value = new Date(iso);
  return Number.isNaN(value.getTime()) ? iso : value.toISOString().slice(0, 10);
}

/** A long identifier (key hash, UUID) shortened for a label; the full value goes in a title. */
export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

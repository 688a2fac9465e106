/**
 * Prices are exact decimal strings (USD per token, per image, per request). Comparing them as
 * floats would rank 0.000000100000000001 and 0.0000001 equal, so they are compared as scaled
 * integers instead.
 *
 * @module
 */
import type { Pricing } from "./catalog.js";

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** A configured price: non-negative, at most 12 decimal places (a pico-dollar). */
export const CONFIG_PRICE = /^\d+(\.\d{1,12})?$/;

function scaled(text: string, scale: number): bigint {
  const match = DECIMAL.exec(text.trim());
  // Only validated prices reach this; anything else ranks as free rather than crashing a listing.
  if (!match) return 0n;
  const fraction = (match[2] ?? "").padEnd(scale, "0").slice(0, scale);
  return BigInt(match[1]! + fraction);
}

function scaleOf(text: string): number {
  const dot = text.indexOf(".");
  return dot === -1 ? 0 : text.length - dot - 1;
}

/** Negative when a < b, positive when a > b, 0 when equal. */
export function compareDecimals(a: string, b: string): number {
  const scale = Math.max(scaleOf(a), scaleOf(b));
  const diff = scaled(a, scale) - scaled(b, scale);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
}

/** Sum of decimal strings, exact, in the shortest form. */
export function addDecimals(...values: string[]): string {
  const scale = Math.max(0, ...values.map(scaleOf));
  const total = values.reduce((sum, value) => sum + scaled(value, scale), 0n);
  if (scale === 0) return total.toString();
  const digits = total.toString().padStart(scale + 1, "0");
  const fraction = digits.slice(-scale).replace(/0+$/, "");
  const whole = digits.slice(0, -scale);
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

/**
 * Orders endpoints by what a typical call costs: prompt plus completion price per token, then
 * the per-request price. Ties keep their order (Array.prototype.sort is stable).
 */
export function comparePricing(a: Pricing, b: Pricing): number {
  return (
    compareDecimals(addDecimals(a.prompt, a.completion), addDecimals(b.prompt, b.completion)) ||
    compareDecimals(a.request, b.request)
  );
}

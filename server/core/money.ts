/**
 * Money is stored as integer micro-dollars (BIGINT) and shown as USD numbers on the wire; the
 * conversion lives here only. `pg` returns BIGINT columns as strings.
 */
const MICROS_PER_USD = 1_000_000;

export function usdToMicros(usd: number): bigint {
  return BigInt(Math.round(usd * MICROS_PER_USD));
}

export function microsToUsd(micros: bigint | string | number): number {
  return Number(micros) / MICROS_PER_USD;
}

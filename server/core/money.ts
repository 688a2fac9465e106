import { gatewayError } from "./errors.js";

/**
 * Money is stored as integer micro-dollars (BIGINT) and shown as USD numbers on the wire; the
 * conversion lives here only. `pg` returns BIGINT columns as strings.
 */
const MICROS_PER_USD = 1_000_000;
/** Beyond this the micro-dollar BIGINT would overflow; no real limit comes near it. */
const MAX_USD = 1_000_000_000_000;

function usdToMicros(usd: number): bigint {
  return BigInt(Math.round(usd * MICROS_PER_USD));
}

/**
 * An optional USD amount as its BIGINT micro-dollar column, null when absent. Proto rules refuse
 * negatives on REST; non-finite and huge values can still arrive over gRPC, so they are a 400 here.
 */
export function storedUsd(usd: number | undefined, field: string): string | null {
  if (usd === undefined) return null;
  if (!Number.isFinite(usd) || usd < 0 || usd > MAX_USD) throw gatewayError(400, `${field} must be a number from 0 to ${MAX_USD}`);
  return usdToMicros(usd).toString();
}

export function microsToUsd(micros: bigint | string | number): number {
  return Number(micros) / MICROS_PER_USD;
}

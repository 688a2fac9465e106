/**
 * Money is stored as integer micro-dollars (BIGINT) and shown as USD numbers on the wire; the
 * conversion lives here only. `pg` returns BIGINT columns as strings.
 *
 * @module
 */
import { gatewayError } from "../../../wire/errors.js";

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
  if (!Number.isFinite(usd) || usd < 0 || usd > MAX_USD)
    throw gatewayError(400, `${field} must be a number from 0 to ${MAX_USD}`);
  return usdToMicros(usd).toString();
}

export function microsToUsd(micros: bigint | string | number): number {
  return Number(micros) / MICROS_PER_USD;
}

/**
 * Costs, prices and spend are exact decimal strings of USD (NUMERIC columns): never floats, so a
 * ledger of a million tiny calls sums to exactly what the counters hold. Arithmetic runs on
 * BigInts scaled to the longest fraction involved; results carry no trailing zeros.
 */
interface Scaled {
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,3}))?$/;

/**
 * Parsed amounts, remembered: every call prices itself several times (worst case, settlement,
 * usage details) from the same few catalog prices, and parsing is a regex and BigInts each time.
 * Results are shared, so nothing may change one; the memory is dropped whole when it fills.
 */
const parsed = new Map<string, Scaled>();
const PARSED_MAX = 1024;

function parseDecimal(text: string): Scaled {
  let scaled = parsed.get(text);
  if (scaled === undefined) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(text, (scaled = parseDecimalText(text)));
  }
  return scaled;
}

function parseDecimalText(text: string): Scaled {
  const match = DECIMAL.exec(text.trim());
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = match ?? [];
  if (!match || whole + fraction === "") throw new RangeError(`not a decimal amount: "${text}"`);
  let units = BigInt(whole + fraction) * (sign === "-" ? -1n : 1n);
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units, scale };
}

function rescale(value: Scaled, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

function formatDecimal({ units, scale }: Scaled): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

function sum(values: Scaled[]): Scaled {
  const scale = Math.max(0, ...values.map((v) => v.scale));
  return { units: values.reduce((total, v) => total + rescale(v, scale), 0n), scale };
}

function tokenCount(count: number, field: string): bigint {
  if (!Number.isSafeInteger(count) || count < 0)
    throw new RangeError(`${field} must be a non-negative integer, got ${count}`);
  return BigInt(count);
}

/** Whether `text` is a non-negative decimal amount these functions accept (config validation). */
export function isUsdDecimal(text: string): boolean {
  try {
    return parseDecimal(text).units >= 0n;
  } catch {
    return false;
  }
}

/**
 * USD per token (prompt, completion), per input image and per request, as decimal strings. A
 * cache price, when the endpoint has one, replaces `prompt` for the prompt tokens read from or
 * written to the provider's prompt cache.
 */
export interface UsdPricing {
  prompt: string;
  completion: string;
  image?: string;
  request?: string;
  inputCacheRead?: string;
  inputCacheWrite?: string;
}

export interface TokenUsage {
  /** Every prompt token, cached or not. */
  promptTokens: number;
  completionTokens: number;
  /** Input images, priced by `image`. */
  images?: number;
  /** Of `promptTokens`, those read from the prompt cache. */
  cachedTokens?: number;
  /** Of `promptTokens`, those written to the prompt cache. */
  cacheWriteTokens?: number;
}

/** The prompt tokens of a call by price: uncached, read from the cache, written to it. */
export interface PromptSplit {
  uncached: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
}

/**
 * Splits the prompt tokens. Cache counts beyond the prompt (a provider's inconsistent report) are
 * cut to it, reads first, so no call is billed for more prompt tokens than it reported.
 */
export function promptSplit(usage: TokenUsage): PromptSplit {
  const prompt = tokenCount(usage.promptTokens, "promptTokens");
  const min = (a: bigint, b: bigint) => (a < b ? a : b);
  const cacheRead = min(tokenCount(usage.cachedTokens ?? 0, "cachedTokens"), prompt);
  const cacheWrite = min(tokenCount(usage.cacheWriteTokens ?? 0, "cacheWriteTokens"), prompt - cacheRead);
  return { uncached: prompt - cacheRead - cacheWrite, cacheRead, cacheWrite };
}

function term(price: string | undefined, count: bigint): Scaled {
  const scaled = parseDecimal(price ?? "0");
  return { units: scaled.units * count, scale: scaled.scale };
}

/** The prompt's terms: uncached tokens at `prompt`, cache reads and writes at their prices (else `prompt`). */
function promptTerms(pricing: UsdPricing, usage: TokenUsage): Scaled[] {
  const split = promptSplit(usage);
  return [
    term(pricing.prompt, split.uncached),
    term(pricing.inputCacheRead ?? pricing.prompt, split.cacheRead),
    term(pricing.inputCacheWrite ?? pricing.prompt, split.cacheWrite),
  ];
}

/** Exact cost of the prompt tokens alone, cache reads and writes included. */
export function promptCostUsd(pricing: UsdPricing, usage: TokenUsage): string {
  return formatDecimal(sum(promptTerms(pricing, usage)));
}

/** Exact cost of one call: the prompt (promptCostUsd) + completion × completion tokens + images + request. */
export function costUsd(pricing: UsdPricing, usage: TokenUsage): string {
  return formatDecimal(
    sum([
      ...promptTerms(pricing, usage),
      term(pricing.completion, tokenCount(usage.completionTokens, "completionTokens")),
      term(pricing.image, tokenCount(usage.images ?? 0, "images")),
      term(pricing.request, 1n),
    ]),
  );
}

export function addUsd(a: string, b: string): string {
  return formatDecimal(sum([parseDecimal(a), parseDecimal(b)]));
}

/** `amount × count`, e.g. a per-item estimate over a batch. */
export function multiplyUsd(amount: string, count: number): string {
  const scaled = parseDecimal(amount);
  return formatDecimal({ units: scaled.units * tokenCount(count, "count"), scale: scaled.scale });
}

/** `limit − spent`, never below zero: what is left of a limit or budget. */
export function remainingUsd(limit: string, spent: string): string {
  const negated = parseDecimal(spent);
  const left = sum([parseDecimal(limit), { units: -negated.units, scale: negated.scale }]);
  return left.units > 0n ? formatDecimal(left) : "0";
}

/** A decimal amount as the JSON number the API shows. */
export function usdNumber(decimal: string): number {
  return Number(decimal);
}

/** A BIGINT micro-dollar limit as an exact decimal USD string, for comparisons with spend. */
export function microsToUsdDecimal(micros: bigint | string): string {
  return formatDecimal({ units: BigInt(micros), scale: 6 });
}

/** The largest of some amounts; "0" for none. */
export function maxUsd(amounts: readonly string[]): string {
  if (amounts.length === 0) return "0";
  const parsed = amounts.map(parseDecimal);
  const scale = Math.max(...parsed.map((p) => p.scale));
  return formatDecimal(parsed.reduce((a, b) => (rescale(b, scale) > rescale(a, scale) ? b : a)));
}

/**
 * Admission leases (server/engine/admission) count money in whole nano-dollars held as numbers, so the
 * hot path adds and compares plain integers. A conversion rounds the way that keeps a lease
 * conservative: what an instance may spend rounds down, what a call may cost rounds up.
 */
const NANO_SCALE = 9;

export function usdToNanos(decimal: string, rounding: "floor" | "ceil"): number {
  const { units, scale } = parseDecimal(decimal);
  if (scale <= NANO_SCALE) return Number(units * 10n ** BigInt(NANO_SCALE - scale));
  const divisor = 10n ** BigInt(scale - NANO_SCALE);
  const whole = units / divisor;
  return Number(rounding === "ceil" && units % divisor !== 0n ? whole + 1n : whole);
}

export function nanosToUsd(nanos: number): string {
  return formatDecimal({ units: BigInt(nanos), scale: NANO_SCALE });
}

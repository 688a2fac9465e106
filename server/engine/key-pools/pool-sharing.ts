import type { KeyChange } from "./key-pool.js";

/** The channel instances tell each other their verdicts on keys on (server/platform/db/notification-feed.ts). */
export const KEY_POOLS_CHANNEL = "gateway_key_pools";

/**
 * A verdict as it travels, with the instance that sent it: the feed hands every instance its own
 * messages too, and an echo of a refusal arriving after this instance's probe already brought the
 * key back would take it out again.
 */
interface SharedChange extends KeyChange {
  from: string;
}

export function encodeChange(change: KeyChange, from: string): string {
  const shared: SharedChange = { ...change, from };
  return JSON.stringify(shared);
}

/**
 * Another instance's verdict, or undefined for one's own and for anything malformed (the channel
 * is open to whoever may NOTIFY on the database). Times are checked here; the pool caps them.
 */
export function decodeChange(payload: string, self: string): KeyChange | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const message = parsed as Partial<Record<keyof SharedChange, unknown>>;
  if (message.from === self || typeof message.provider !== "string" || typeof message.fingerprint !== "string")
    return undefined;
  const change: KeyChange = { provider: message.provider, fingerprint: message.fingerprint };
  if (message.recovered === true) change.recovered = true;
  else if (message.refused === true) {
    change.refused = true;
    if (isTime(message.probeAt)) change.probeAt = message.probeAt;
  } else if (isTime(message.until)) change.until = message.until;
  else return undefined;
  return change;
}

function isTime(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

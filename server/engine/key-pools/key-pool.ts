import { UpstreamError } from "../providers/provider.js";
import { chooseKey } from "./key-choice.js";
import type { PoolKey } from "./pool-key.js";
import type { KeyVerdict } from "./key-verdicts.js";

/** The first cooldown without Retry-After; each strike in a row doubles it, up to MAX_COOLDOWN_MS. */
const FIRST_COOLDOWN_MS = 1_000;
const MAX_COOLDOWN_MS = 5 * 60_000;

/** What one key's state is, as metrics, logs and the console show it. */
export type KeyState = "healthy" | "cooling" | "refused";

export interface KeyHealth {
  label: string;
  weight: number;
  state: KeyState;
  /** Epoch ms the cooldown ends, while cooling. */
  coolingUntil: number | undefined;
}

/** A verdict on a key, as instances tell each other (pool-sharing.ts): by provider and fingerprint, never the key. */
export interface KeyChange {
  provider: string;
  fingerprint: string;
  /** Epoch ms; a cooldown. */
  until?: number;
  refused?: true;
}

interface KeyStatus {
  coolingUntil: number;
  /** Cooldowns in a row without Retry-After, for the doubling. */
  strikes: number;
  refused: boolean;
}

/**
 * The keys of one provider and what this instance knows of their health. Cooldowns only ever
 * grow: a shorter one (a later Retry-After, another instance's word) never shortens one already
 * running. A refused key stays out for the life of the configuration.
 */
export class KeyPool {
  private readonly status = new Map<PoolKey, KeyStatus>();

  constructor(
    readonly provider: string,
    readonly keys: readonly PoolKey[],
  ) {
    for (const key of keys) this.status.set(key, { coolingUntil: 0, strikes: 0, refused: false });
  }

  /**
   * The key for a call with this affinity, among those usable now and not `tried` by the call.
   * None usable: a 429 naming the earliest end of a cooldown when a key is only resting, else a
   * 401 (every key refused), both failures routing falls back on.
   */
  choose(affinity: number, tried: readonly PoolKey[], now: number): PoolKey {
    const chosen = chooseKey(affinity, this.keys, (key) => this.usable(key, now) && (tried.length === 0 || !tried.includes(key)));
    if (chosen) return chosen;
    const resting = this.keys.filter((key) => !this.status.get(key)!.refused && !tried.includes(key));
    if (resting.length === 0) {
      throw new UpstreamError("status", `every key of ${this.provider} was refused or already tried`, { status: this.keys.some((key) => !this.status.get(key)!.refused) ? 502 : 401 });
    }
    const until = Math.min(...resting.map((key) => this.status.get(key)!.coolingUntil));
    throw new UpstreamError("status", `every key of ${this.provider} is cooling down after rate limits`, { status: 429, retryAfterS: Math.max(1, Math.ceil((until - now) / 1000)) });
  }

  /** Whether another key than those tried could take the call now. */
  hasAnother(tried: readonly PoolKey[], now: number): boolean {
    return this.keys.some((key) => !tried.includes(key) && this.usable(key, now));
  }

  /** Records a verdict on `key`; returns the change to tell the other instances, if any. */
  failed(key: PoolKey, verdict: KeyVerdict, retryAfterS: number | undefined, now: number): KeyChange | undefined {
    const status = this.status.get(key);
    if (!status) return undefined;
    if (verdict === "refused") {
      if (status.refused) return undefined;
      status.refused = true;
      return { provider: this.provider, fingerprint: key.fingerprint, refused: true };
    }
    if (verdict !== "cooldown") return undefined;
    status.strikes += 1;
    const ms = retryAfterS !== undefined ? retryAfterS * 1000 : Math.min(MAX_COOLDOWN_MS, FIRST_COOLDOWN_MS * 2 ** (status.strikes - 1));
    const until = now + ms;
    if (until <= status.coolingUntil) return undefined;
    status.coolingUntil = until;
    return { provider: this.provider, fingerprint: key.fingerprint, until };
  }

  /** A call on `key` succeeded: the next cooldown without Retry-After starts short again. */
  succeeded(key: PoolKey): void {
    const status = this.status.get(key);
    if (status && status.strikes !== 0) status.strikes = 0;
  }

  /** Another instance's verdict; true when it changed what this one knew. */
  apply(change: KeyChange): boolean {
    const key = this.keys.find((k) => k.fingerprint === change.fingerprint);
    const status = key && this.status.get(key);
    if (!status) return false;
    if (change.refused) {
      const changed = !status.refused;
      status.refused = true;
      return changed;
    }
    if (change.until === undefined || change.until <= status.coolingUntil) return false;
    status.coolingUntil = change.until;
    return true;
  }

  health(now: number): KeyHealth[] {
    return this.keys.map((key) => {
      const status = this.status.get(key)!;
      const state: KeyState = status.refused ? "refused" : status.coolingUntil > now ? "cooling" : "healthy";
      return { label: key.label, weight: key.weight, state, coolingUntil: state === "cooling" ? status.coolingUntil : undefined };
    });
  }

  private usable(key: PoolKey, now: number): boolean {
    const status = this.status.get(key)!;
    return !status.refused && status.coolingUntil <= now;
  }
}

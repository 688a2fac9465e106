import { UpstreamError } from "../providers/provider.js";
import { chooseKey } from "./key-choice.js";
import type { PoolKey } from "./pool-key.js";
import { FORBIDDEN_CALLS_TO_REFUSE, FORBIDDEN_WINDOW_MS, type KeyVerdict } from "./key-verdicts.js";

/**
 * The first cooldown without Retry-After; each strike in a row doubles it, up to MAX_COOLDOWN_MS
 * (and the configured cap).
 */
const FIRST_COOLDOWN_MS = 1_000;
const MAX_COOLDOWN_MS = 5 * 60_000;
/**
 * A refused key is probed again after this long, doubling per failed probe up to MAX_PROBE_MS: a
 * key rotated at the provider, or a refusal that was a passing fault, comes back without a
 * restart, while a key that stays revoked costs one failed call an hour at most.
 */
const FIRST_PROBE_MS = 2 * 60_000;
const MAX_PROBE_MS = 60 * 60_000;
/**
 * A probe whose call never reported (it failed in the gateway rather than upstream) must not keep
 * the key out for good: after this long another call may probe it.
 */
const PROBE_LEASE_MS = 60_000;

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
  /** With `refused`: epoch ms from which a call may probe the key again. */
  probeAt?: number;
  /** A refused key answered a call again: it takes calls. */
  recovered?: true;
}

/** What a failed call said about its key. */
export interface Judgement {
  /** It rested, refused or counted against the key: the call says nothing about another key. */
  judged: boolean;
  /** The key is out (resting or refused) after it: the call may go to another key. */
  out: boolean;
  /** The key's new state, to tell the other instances; none when nothing changed. */
  change?: KeyChange;
}

const NOTHING: Judgement = { judged: false, out: false };

interface KeyStatus {
  coolingUntil: number;
  /** Cooldowns in a row without Retry-After, for the doubling. */
  strikes: number;
  refused: boolean;
  /** While refused: epoch ms from which one call may probe the key. */
  probeAt: number;
  /** The wait before the probe of the current refusal; 0 when the key was not refused since it last answered. */
  probeBackoffMs: number;
  /** Epoch ms this instance handed the probe to a call; 0 when no probe is out. */
  probeSince: number;
  /** When recent distinct calls met a 403 on the key (fewer than FORBIDDEN_CALLS_TO_REFUSE). */
  forbiddenAt: number[];
}

/**
 * The keys of one provider and what this instance knows of their health. Cooldowns only ever
 * grow (a shorter Retry-After, another instance's word never shortens one running), up to
 * `cooldownMaxMs` from now. A refused key is out until its probe: once the back-off has passed,
 * one call at a time may use it, and its answer decides (healthy again, or a longer back-off).
 */
export class KeyPool {
  private readonly status = new Map<PoolKey, KeyStatus>();

  constructor(
    readonly provider: string,
    readonly keys: readonly PoolKey[],
    /**
     * GATEWAY_KEY_COOLDOWN_MAX_SECONDS in ms: the longest a key rests, whatever the provider or
     * another instance says.
     */
    private readonly cooldownMaxMs: number,
  ) {
    for (const key of keys)
      this.status.set(key, {
        coolingUntil: 0,
        strikes: 0,
        refused: false,
        probeAt: 0,
        probeBackoffMs: 0,
        probeSince: 0,
        forbiddenAt: [],
      });
  }

  /**
   * The key for a call with this affinity, among those usable now and not `tried` by the call; a
   * refused key whose probe is due is usable by one call, which becomes its probe. None usable: a
   * 429 naming the earliest end of a cooldown when a key is only resting, else a 401 (every key
   * refused), both failures routing falls back on.
   */
  choose(affinity: number, tried: readonly PoolKey[], now: number): PoolKey {
    const chosen = chooseKey(
      affinity,
      this.keys,
      (key) => this.usable(key, now) && (tried.length === 0 || !tried.includes(key)),
    );
    if (chosen) {
      const status = this.status.get(chosen)!;
      if (status.refused) status.probeSince = now;
      return chosen;
    }
    const resting = this.keys.filter((key) => !this.status.get(key)!.refused && !tried.includes(key));
    if (resting.length === 0) {
      throw new UpstreamError("status", `every key of ${this.provider} was refused or already tried`, {
        status: this.keys.some((key) => !this.status.get(key)!.refused) ? 502 : 401,
      });
    }
    const until = Math.min(...resting.map((key) => this.status.get(key)!.coolingUntil));
    throw new UpstreamError("status", `every key of ${this.provider} is cooling down after rate limits`, {
      status: 429,
      retryAfterS: Math.max(1, Math.ceil((until - now) / 1000)),
    });
  }

  /** Whether another key than those tried could take the call now. */
  hasAnother(tried: readonly PoolKey[], now: number): boolean {
    return this.keys.some((key) => !tried.includes(key) && this.usable(key, now));
  }

  /** Records a call's verdict on `key`, for a call that has not judged a key yet. */
  failed(key: PoolKey, verdict: KeyVerdict, retryAfterS: number | undefined, now: number): Judgement {
    const status = this.status.get(key);
    if (!status) return NOTHING;
    if (status.refused) {
      if (verdict === "refused" || verdict === "forbidden") {
        // The probe failed: a longer back-off. A call that took the key before it was refused says nothing new.
        return { judged: true, out: true, change: status.probeSince !== 0 ? this.refuse(key, status, now) : undefined };
      }
      // The probe's answer was about something else (the request, a busy provider): the next call
      // probes. A 429 still sends the call to a key that is not out.
      status.probeSince = 0;
      return verdict === "cooldown" ? { judged: false, out: true } : NOTHING;
    }
    switch (verdict) {
      case "refused":
        return { judged: true, out: true, change: this.refuse(key, status, now) };
      case "forbidden":
        return this.forbidden(key, status, now);
      case "cooldown":
        return { judged: true, out: true, change: this.rest(key, status, retryAfterS, now) };
      default:
        return NOTHING;
    }
  }

  /** Judges nothing, but a probe the call held on `key` is over (a call says something about one key at most). */
  released(key: PoolKey): void {
    const status = this.status.get(key);
    if (status?.refused) status.probeSince = 0;
  }

  /**
   * A call on `key` succeeded: the next cooldown without Retry-After starts short again, and a
   * refused key whose probe this was is healthy again (the change to tell the other instances).
   */
  succeeded(key: PoolKey): KeyChange | undefined {
    const status = this.status.get(key);
    if (!status) return undefined;
    if (status.strikes !== 0) status.strikes = 0;
    if (!status.refused || status.probeSince === 0) return undefined;
    this.recover(status);
    return { provider: this.provider, fingerprint: key.fingerprint, recovered: true };
  }

  /**
   * Another instance's verdict; true when it changed what this one knew. Its times are capped as
   * this instance's own.
   */
  apply(change: KeyChange, now: number): boolean {
    const key = this.keys.find((k) => k.fingerprint === change.fingerprint);
    const status = key && this.status.get(key);
    if (!status) return false;
    if (change.recovered) {
      if (!status.refused) return false;
      this.recover(status);
      return true;
    }
    if (change.refused) {
      // A message without a probe time (an instance of an older version) waits the first back-off.
      const probeAt = Math.min(change.probeAt ?? now + FIRST_PROBE_MS, now + MAX_PROBE_MS);
      if (status.refused && probeAt <= status.probeAt) return false;
      status.refused = true;
      status.probeAt = probeAt;
      status.probeBackoffMs = Math.max(
        status.probeBackoffMs,
        Math.min(MAX_PROBE_MS, Math.max(FIRST_PROBE_MS, probeAt - now)),
      );
      return true;
    }
    if (change.until === undefined) return false;
    const until = Math.min(change.until, now + this.cooldownMaxMs);
    if (until <= status.coolingUntil) return false;
    status.coolingUntil = until;
    return true;
  }

  health(now: number): KeyHealth[] {
    return this.keys.map((key) => {
      const status = this.status.get(key)!;
      const state: KeyState = status.refused ? "refused" : status.coolingUntil > now ? "cooling" : "healthy";
      return {
        label: key.label,
        weight: key.weight,
        state,
        coolingUntil: state === "cooling" ? status.coolingUntil : undefined,
      };
    });
  }

  private usable(key: PoolKey, now: number): boolean {
    const status = this.status.get(key)!;
    if (!status.refused) return status.coolingUntil <= now;
    return status.probeAt <= now && (status.probeSince === 0 || now - status.probeSince >= PROBE_LEASE_MS);
  }

  /** Out until its probe: 2 min after a first refusal, doubling per failed probe up to an hour. */
  private refuse(key: PoolKey, status: KeyStatus, now: number): KeyChange {
    status.refused = true;
    status.probeBackoffMs =
      status.probeBackoffMs === 0 ? FIRST_PROBE_MS : Math.min(MAX_PROBE_MS, status.probeBackoffMs * 2);
    status.probeAt = now + status.probeBackoffMs;
    status.probeSince = 0;
    status.forbiddenAt = [];
    return { provider: this.provider, fingerprint: key.fingerprint, refused: true, probeAt: status.probeAt };
  }

  /** A 403 counts against the key; the FORBIDDEN_CALLS_TO_REFUSE-th within the window refuses it. */
  private forbidden(key: PoolKey, status: KeyStatus, now: number): Judgement {
    const recent = status.forbiddenAt.filter((at) => now - at < FORBIDDEN_WINDOW_MS);
    recent.push(now);
    if (recent.length < FORBIDDEN_CALLS_TO_REFUSE) {
      status.forbiddenAt = recent;
      return { judged: true, out: false };
    }
    return { judged: true, out: true, change: this.refuse(key, status, now) };
  }

  /** Rests the key for Retry-After, else 1 s doubling per strike; never past `cooldownMaxMs` from now. */
  private rest(key: PoolKey, status: KeyStatus, retryAfterS: number | undefined, now: number): KeyChange | undefined {
    status.strikes += 1;
    const asked =
      retryAfterS !== undefined
        ? Math.max(0, retryAfterS) * 1000
        : Math.min(MAX_COOLDOWN_MS, FIRST_COOLDOWN_MS * 2 ** (status.strikes - 1));
    const until = now + Math.min(asked, this.cooldownMaxMs);
    if (until <= status.coolingUntil) return undefined;
    status.coolingUntil = until;
    return { provider: this.provider, fingerprint: key.fingerprint, until };
  }

  private recover(status: KeyStatus): void {
    status.refused = false;
    status.probeAt = 0;
    status.probeBackoffMs = 0;
    status.probeSince = 0;
    status.forbiddenAt = [];
  }
}

import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import type { NotificationFeed } from "../../platform/db/notification-feed.js";
import type { Logger } from "../../platform/logger.js";
import type { CatalogProvider } from "../catalog/catalog.js";
import type { UpstreamError } from "../providers/provider.js";
import { affinityHash } from "./key-choice.js";
import { KeyPool, type KeyChange, type KeyHealth } from "./key-pool.js";
import { verdictOf, type KeyVerdict } from "./key-verdicts.js";
import type { PoolKey } from "./pool-key.js";
import { decodeChange, encodeChange, KEY_POOLS_CHANNEL } from "./pool-sharing.js";
import { promptPrefix } from "./prompt-prefix.js";

/** Told of every verdict on a pooled key (the metrics); cheap, never throws. */
export interface KeyPoolObserver {
  keyFailed(provider: string, key: string, verdict: KeyVerdict): void;
}

export interface KeyPoolsOptions {
  /** GATEWAY_KEY_COOLDOWN_MAX_SECONDS, in ms. */
  cooldownMaxMs: number;
  observer?: KeyPoolObserver;
  /**
   * The clock every verdict and choice reads (Date.now); a test moves it past a probe's back-off
   * instead of waiting.
   */
  now?: () => number;
}

/**
 * What a call needs to pick keys: its affinity, computed only when a provider of its route has a
 * pool, the keys it has tried so far (the call's own list, over all its endpoints), and the one
 * key its failures said something about, if any.
 */
export interface KeyChoice {
  affinity(): number;
  readonly triedKeys: PoolKey[];
  /** Set by KeyPools.afterFailure: a call rests, refuses or counts against one key at most. */
  judgedKey: PoolKey | undefined;
}

/** A call's affinity: its session when it has one, else the beginning of its prompt (prompt-prefix.ts). */
export function affinityOf(sessionId: string | undefined, body: JsonObject | undefined): number {
  return affinityHash(
    sessionId !== undefined ? `session:${sessionId}` : `prompt:${body === undefined ? "" : promptPrefix(body)}`,
  );
}

/**
 * The key pools of the providers that list more than one key (a provider with one key has no pool
 * and no state: its calls go as they always did). Verdicts are shared with the other instances
 * through the notification feed (pool-sharing.ts), so a 429 seen by one spares the others.
 */
export class KeyPools {
  private readonly pools = new Map<string, KeyPool>();
  /** How this instance signs its messages on the feed, to know its own echoes. */
  private readonly self = randomUUID();
  private readonly observer: KeyPoolObserver | undefined;
  readonly now: () => number;

  constructor(
    providers: Iterable<CatalogProvider>,
    private readonly log: Logger,
    private readonly feed: NotificationFeed | undefined,
    options: KeyPoolsOptions,
  ) {
    this.observer = options.observer;
    this.now = options.now ?? Date.now;
    for (const provider of providers)
      if (provider.keys.length > 1)
        this.pools.set(provider.slug, new KeyPool(provider.slug, provider.keys, options.cooldownMaxMs));
    if (this.pools.size > 0) feed?.subscribe(KEY_POOLS_CHANNEL, (payload) => this.heard(payload));
  }

  pool(provider: string): KeyPool | undefined {
    return this.pools.get(provider);
  }

  /** The key of `pool` for the call (KeyPool.choose), on this instance's clock. */
  choose(pool: KeyPool, choice: KeyChoice): PoolKey {
    return pool.choose(choice.affinity(), choice.triedKeys, this.now());
  }

  /**
   * Records what a failed call says about its key, and whether the call should go at once to
   * another key of the same pool (and then adds the key to the call's tried ones). A call judges
   * one key at most: after a cooldown or a refusal it may move once to another usable key; a 403
   * below the threshold is the request's fault, and the call answers it; after a server failure it
   * gets one retry on another key; once it has judged a key, its later failures judge none.
   */
  afterFailure(pool: KeyPool, key: PoolKey, error: UpstreamError, choice: KeyChoice): boolean {
    const verdict = verdictOf(error);
    if (verdict !== "none") this.observer?.keyFailed(pool.provider, key.label, verdict);
    if (choice.judgedKey !== undefined) {
      pool.released(key);
      return false;
    }
    const now = this.now();
    const judgement = pool.failed(key, verdict, error.options.retryAfterS, now);
    if (judgement.change) this.changed(pool, key, judgement.change, verdict, now);
    if (judgement.judged) choice.judgedKey = key;
    const tried = choice.triedKeys;
    if (!judgement.out && (verdict !== "unhealthy" || tried.some((k) => pool.keys.includes(k)))) return false;
    tried.push(key);
    return pool.hasAnother(tried, now);
  }

  /** A call on `key` succeeded: a refused key it probed takes calls again, on every instance. */
  succeeded(pool: KeyPool, key: PoolKey): void {
    const change = pool.succeeded(key);
    if (!change) return;
    this.log.warn(
      { provider: pool.provider, poolKey: key.label },
      "a refused key of the provider's pool answered its probe; it takes calls again",
    );
    this.feed?.notify(KEY_POOLS_CHANNEL, encodeChange(change, this.self));
  }

  /** Every pool's keys and their state now, by provider. */
  health(): Map<string, KeyHealth[]> {
    const now = this.now();
    return new Map([...this.pools].map(([slug, pool]) => [slug, pool.health(now)]));
  }

  /** Says what changed in the log (never the key, its label) and to the other instances. */
  private changed(pool: KeyPool, key: PoolKey, change: KeyChange, verdict: KeyVerdict, now: number): void {
    const where = { provider: pool.provider, poolKey: key.label };
    if (change.refused) {
      const probeAt = new Date(change.probeAt ?? now).toISOString();
      const why =
        verdict === "forbidden"
          ? "the provider answered 403 to several calls on a key of its pool"
          : "the provider refused a key of its pool";
      this.log.error({ ...where, probeAt }, `${why}; it is not used again before a probe at probeAt`);
    } else {
      this.log.warn(
        { ...where, coolingUntil: new Date(change.until ?? now).toISOString() },
        "a key of the provider's pool is rate limited; it rests",
      );
    }
    this.feed?.notify(KEY_POOLS_CHANNEL, encodeChange(change, this.self));
  }

  private heard(payload: string): void {
    const change = decodeChange(payload, this.self);
    if (change) this.pools.get(change.provider)?.apply(change, this.now());
  }
}

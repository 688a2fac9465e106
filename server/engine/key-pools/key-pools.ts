import type { JsonObject } from "@bufbuild/protobuf";
import type { NotificationFeed } from "../../platform/db/notification-feed.js";
import type { Logger } from "../../platform/logger.js";
import type { CatalogProvider } from "../catalog/catalog.js";
import type { UpstreamError } from "../providers/provider.js";
import { affinityHash } from "./key-choice.js";
import { KeyPool, type KeyChange, type KeyHealth } from "./key-pool.js";
import { verdictOf, type KeyVerdict } from "./key-verdicts.js";
import type { PoolKey } from "./pool-key.js";
import { promptPrefix } from "./prompt-prefix.js";

/** The channel instances tell each other their verdicts on keys on (server/platform/db/notification-feed.ts). */
const CHANNEL = "gateway_key_pools";

/** Told of every verdict on a pooled key (the metrics); cheap, never throws. */
export interface KeyPoolObserver {
  keyFailed(provider: string, key: string, verdict: KeyVerdict): void;
}

/**
 * What a call needs to pick keys: its affinity, computed only when a provider of its route has a
 * pool, and the keys it has tried so far (the call's own list, over all its endpoints).
 */
export interface KeyChoice {
  affinity(): number;
  readonly triedKeys: PoolKey[];
}

/** A call's affinity: its session when it has one, else the beginning of its prompt (prompt-prefix.ts). */
export function affinityOf(sessionId: string | undefined, body: JsonObject | undefined): number {
  return affinityHash(sessionId !== undefined ? `session:${sessionId}` : `prompt:${body === undefined ? "" : promptPrefix(body)}`);
}

/**
 * The key pools of the providers that list more than one key (a provider with one key has no pool
 * and no state: its calls go as they always did). Verdicts are shared with the other instances
 * through the notification feed, so a 429 seen by one spares the others.
 */
export class KeyPools {
  private readonly pools = new Map<string, KeyPool>();

  constructor(
    providers: Iterable<CatalogProvider>,
    private readonly log: Logger,
    private readonly feed: NotificationFeed | undefined,
    private readonly observer?: KeyPoolObserver,
  ) {
    for (const provider of providers) if (provider.keys.length > 1) this.pools.set(provider.slug, new KeyPool(provider.slug, provider.keys));
    if (this.pools.size > 0) feed?.subscribe(CHANNEL, (payload) => this.heard(payload));
  }

  pool(provider: string): KeyPool | undefined {
    return this.pools.get(provider);
  }

  /**
   * Records what a failed call says about its key, and whether the call should go at once to
   * another key of the same pool (and then adds the key to the call's tried ones): after a
   * cooldown or a refusal whenever another key is usable; after a server failure only once per call.
   */
  afterFailure(pool: KeyPool, key: PoolKey, error: UpstreamError, choice: KeyChoice): boolean {
    const verdict = verdictOf(error);
    if (verdict === "none") return false;
    this.observer?.keyFailed(pool.provider, key.label, verdict);
    const now = Date.now();
    const change = pool.failed(key, verdict, error.options.retryAfterS, now);
    if (change) {
      if (verdict === "refused") this.log.error({ provider: pool.provider, poolKey: key.label }, "the provider refused a key of its pool; it is not used again until the configuration changes");
      else this.log.warn({ provider: pool.provider, poolKey: key.label, coolingUntil: new Date(change.until ?? now).toISOString() }, "a key of the provider's pool is rate limited; it rests");
      this.feed?.notify(CHANNEL, JSON.stringify(change));
    }
    const tried = choice.triedKeys;
    const again = verdict !== "unhealthy" || !tried.some((k) => pool.keys.includes(k));
    tried.push(key);
    return again && pool.hasAnother(tried, now);
  }

  /** Every pool's keys and their state now, by provider. */
  health(): Map<string, KeyHealth[]> {
    const now = Date.now();
    return new Map([...this.pools].map(([slug, pool]) => [slug, pool.health(now)]));
  }

  private heard(payload: string): void {
    let change: KeyChange;
    try {
      change = JSON.parse(payload) as KeyChange;
    } catch {
      return;
    }
    if (typeof change?.provider !== "string" || typeof change.fingerprint !== "string") return;
    this.pools.get(change.provider)?.apply(change);
  }
}

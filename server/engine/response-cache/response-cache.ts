import { LRUCache } from "lru-cache";
import type { Sequelize } from "sequelize";
import type { ResponseCacheConfig } from "../../platform/config.js";
import type { Logger } from "../../platform/logger.js";
import { errorMessage } from "../../../wire/errors.js";
import type { CachedAnswer } from "./cached-answer.js";
import type { CacheScope } from "./cache-key.js";
import { readCachedAnswer, sweepCachedAnswers, writeCachedAnswer } from "./response-cache-store.js";

/** Told of lookups and stores (the metrics); cheap, never throws. */
export interface ResponseCacheObserver {
  looked(outcome: "hit" | "miss"): void;
  stored(bytes: number): void;
  /** The bytes PostgreSQL holds after a sweep. */
  swept(bytes: number): void;
}

/** A miss this call answers for: the identical calls that wait on it are told when it is over. */
export interface CacheFlight {
  /** The answer is stored, or the call failed: either way the waiting calls look again. */
  land(): void;
}

export type CacheLookup = { hit: CachedAnswer } | { flight: CacheFlight };

interface MemoryEntry {
  /** The entry but its answer, which is kept as text. */
  facts: Omit<CachedAnswer, "answer">;
  /** The answer as stored, for its size and for each hit to parse its own copy (a hit changes it). */
  text: string;
}

/**
 * Cached answers: PostgreSQL holds them for every instance and across restarts; each process keeps
 * the recently used ones in memory (lru-cache, bounded in bytes) in front. Concurrent identical
 * misses make one upstream call per process: the first leads (`flight`), the others wait for it to
 * land (bounded by their own deadline) and look again. A lost read or write is logged and counts as
 * a miss: the cache never fails a call. README.md beside this file says why it works as it does.
 */
export class ResponseCache {
  private readonly memory: LRUCache<string, MemoryEntry>;
  private readonly flights = new Map<string, Promise<void>>();
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly config: ResponseCacheConfig,
    private readonly log: Logger,
    private readonly observer?: ResponseCacheObserver,
  ) {
    this.memory = new LRUCache({
      maxSize: Math.max(1, config.memoryBytes),
      sizeCalculation: (value) => Math.max(1, value.text.length),
      ttlAutopurge: false,
    });
  }

  /**
   * A hit, or the flight this call now leads; waits first (up to `waitMs`, or until `signal`) for
   * an identical call already going upstream.
   */
  async lookup(key: string, signal: AbortSignal, waitMs: number): Promise<CacheLookup> {
    for (;;) {
      const held = this.fromMemory(key);
      if (held) return this.looked({ hit: held });
      const going = this.flights.get(key);
      if (going === undefined) break;
      await untilLanded(going, AbortSignal.any([signal, AbortSignal.timeout(waitMs)]));
    }
    const flight = this.lead(key);
    try {
      const stored = await readCachedAnswer(this.sequelize, key);
      if (stored) {
        this.remember(key, stored.entry, JSON.stringify(stored.entry.answer), stored.expiresAt - Date.now());
        flight.land();
        // Parsed from the row for this call alone: it may change it.
        return this.looked({ hit: stored.entry });
      }
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, "response cache read failed; answering as a miss");
    }
    return this.looked({ flight });
  }

  /**
   * Stores a fresh answer for `ttlS`: in memory now, in PostgreSQL behind the call. An answer over
   * GATEWAY_CACHE_MAX_ENTRY_BYTES is not stored at all: one huge answer would push out many small
   * ones, in memory and in its workspace's share.
   */
  store(key: string, scope: CacheScope, entry: CachedAnswer, ttlS: number): void {
    const text = JSON.stringify(entry.answer);
    const bytes = Buffer.byteLength(text);
    if (bytes > this.config.maxEntryBytes) {
      this.log.debug({ bytes, maxEntryBytes: this.config.maxEntryBytes }, "response cache: answer too large to store");
      return;
    }
    this.remember(key, entry, text, ttlS * 1000);
    this.observer?.stored(bytes);
    if (this.config.maxBytes === 0) return;
    const write = writeCachedAnswer(this.sequelize, key, scope, entry, text, ttlS)
      .catch((err: unknown) =>
        this.log.warn(
          { err: errorMessage(err) },
          "response cache write failed; the answer stays cached in this process only",
        ),
      )
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  /** Deletes expired entries and enforces GATEWAY_CACHE_MAX_BYTES (the sweeping worker's step). */
  async sweep(): Promise<void> {
    const { deleted, bytes } = await sweepCachedAnswers(this.sequelize, this.config.maxBytes);
    this.observer?.swept(bytes);
    if (deleted > 0) this.log.debug({ deleted, bytes }, "response cache swept");
  }

  /** Resolves once the writes queued so far are in PostgreSQL (or failed). */
  async barrier(): Promise<void> {
    await Promise.all([...this.writes]);
  }

  /** Waits for the writes still on their way (shutdown, before the database closes). */
  stop(): Promise<void> {
    return this.barrier();
  }

  private lead(key: string): CacheFlight {
    let landed!: () => void;
    const going = new Promise<void>((resolve) => (landed = resolve));
    this.flights.set(key, going);
    return {
      land: () => {
        if (this.flights.get(key) === going) this.flights.delete(key);
        landed();
      },
    };
  }

  /** A copy the caller may change: entries are shared between the calls they answer. */
  private fromMemory(key: string): CachedAnswer | undefined {
    const held = this.memory.get(key);
    return held && { ...held.facts, answer: JSON.parse(held.text) as CachedAnswer["answer"] };
  }

  private remember(key: string, { answer: _answer, ...facts }: CachedAnswer, text: string, ttlMs: number): void {
    if (ttlMs > 0 && this.config.memoryBytes > 0) this.memory.set(key, { facts, text }, { ttl: Math.ceil(ttlMs) });
  }

  private looked(lookup: CacheLookup): CacheLookup {
    this.observer?.looked("hit" in lookup ? "hit" : "miss");
    return lookup;
  }
}

/** Resolves when the flight lands, or throws the signal's reason. */
function untilLanded(going: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    signal.addEventListener("abort", aborted, { once: true });
    void going.then(() => {
      signal.removeEventListener("abort", aborted);
      resolve();
    });
  });
}

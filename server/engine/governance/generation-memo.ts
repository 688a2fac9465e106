import { LRUCache } from "lru-cache";

/** What a memo asks of the change feed: the current generation, and whether changes are being heard. */
export interface Generations {
  current(): number;
  live(): boolean;
}

export interface MemoBounds {
  /** Values kept, least recently used out first. */
  maxEntries: number;
  /** Lookups that found nothing, kept apart and bounded on their own. */
  maxUnknown: number;
  /** A bound on staleness should a change notification ever be lost. */
  ttlMs: number;
}

/**
 * `load` memoized by id for the current generation: an entry loaded in an older generation is
 * never served, including one whose load began before a change and finished after it. Loads in
 * flight are shared by the calls that ask meanwhile. A settled value goes among the known ones or,
 * when `known` says it is nothing (a key hash that matches no key), among the unknowns: anyone can
 * send unknown keys, and a flood of them must not push real callers out (each would then cost a
 * database read on its next call). Without the feed a fresh load could be missed by a later
 * change, so it is used once and not kept. A failed load is not remembered.
 */
export function generationMemo<A, V>(
  generations: Generations,
  bounds: MemoBounds,
  load: (arg: A) => Promise<V>,
  known: (value: V) => boolean = () => true,
): (id: string, arg: A) => Promise<V> {
  interface Entry {
    generation: number;
    value: Promise<V>;
  }
  const found = new LRUCache<string, Entry>({ max: bounds.maxEntries, ttl: bounds.ttlMs });
  const unknown = new LRUCache<string, Entry>({ max: bounds.maxUnknown, ttl: bounds.ttlMs });
  const loading = new Map<string, Entry>();
  return (id, arg) => {
    const hit = loading.get(id) ?? found.get(id) ?? unknown.get(id);
    if (hit && hit.generation === generations.current()) return hit.value;
    if (!generations.live()) return load(arg);
    const entry: Entry = { generation: generations.current(), value: load(arg) };
    loading.set(id, entry);
    const settle = (keep: LRUCache<string, Entry> | undefined) => {
      if (loading.get(id) !== entry) return;
      loading.delete(id);
      keep?.set(id, entry);
    };
    entry.value.then(
      (value) => settle(known(value) ? found : unknown),
      () => settle(undefined),
    );
    return entry.value;
  };
}

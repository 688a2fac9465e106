import type { PoolKey } from "./pool-key.js";

/**
 * Which usable key serves a call: weighted rendezvous hashing of the call's affinity (its
 * session, or its prompt's beginning). Each key scores `weight / -ln(u)`, `u` a uniform hash of
 * (affinity, key); the highest wins. Over many affinities each key wins in proportion to its
 * weight; one affinity keeps winning the same key while that key stays usable, so providers'
 * prompt caches (per key or organization) keep their hits; and when a key drops out only the calls
 * it won move, each to the key that scored second.
 */
export function chooseKey(
  affinity: number,
  keys: readonly PoolKey[],
  usable: (key: PoolKey) => boolean,
): PoolKey | undefined {
  let best: PoolKey | undefined;
  let bestScore = -1;
  for (const key of keys) {
    if (!usable(key)) continue;
    const u = (mix32(affinity ^ key.seed) + 0.5) / 4_294_967_296;
    const score = key.weight / -Math.log(u);
    if (score > bestScore) {
      best = key;
      bestScore = score;
    }
  }
  return best;
}

/** FNV-1a over UTF-16 code units: a call's affinity as a number. */
export function affinityHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** MurmurHash3's finalizer: spreads every input bit over the output. */
function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

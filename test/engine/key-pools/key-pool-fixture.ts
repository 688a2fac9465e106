import { KeyPool, type KeyState } from "../../../server/engine/key-pools/key-pool.js";
import type { KeyChoice } from "../../../server/engine/key-pools/key-pools.js";
import { affinityHash } from "../../../server/engine/key-pools/key-choice.js";
import { poolKey, type PoolKey } from "../../../server/engine/key-pools/pool-key.js";
import { UpstreamError } from "../../../server/engine/providers/provider.js";
import type { CatalogProvider } from "../../../server/engine/catalog/catalog.js";

/** What the key pool's unit suites share: a fixed clock, pools of given weights, failures by status. */
export const T0 = 1_800_000_000_000;
/** GATEWAY_KEY_COOLDOWN_MAX_SECONDS's default, in ms. */
export const CAP_MS = 900_000;
export const MINUTE = 60_000;
export const keys = (weights: number[]): PoolKey[] => weights.map((weight, i) => poolKey(`secret-${i}`, weight, i));
export const newPool = (weights: number[], capMs = CAP_MS) => new KeyPool("openai", keys(weights), capMs);
export const status = (code: number, retryAfterS?: number) =>
  new UpstreamError(
    "status",
    `upstream ${code}`,
    retryAfterS === undefined ? { status: code } : { status: code, retryAfterS },
  );
export const states = (pool: KeyPool, now: number): KeyState[] => pool.health(now).map((key) => key.state);
/** How many of `calls` different prompts each key serves. */
export const wins = (pool: KeyPool, calls: number, now = T0): Map<string, number> => {
  const counts = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    const key = pool.choose(affinityHash(`prompt number ${i}`), [], now);
    counts.set(key.label, (counts.get(key.label) ?? 0) + 1);
  }
  return counts;
};
export const provider: CatalogProvider = {
  slug: "openai",
  name: "OpenAI",
  kind: "openai",
  baseUrl: "http://x",
  keys: keys([1, 1, 1]),
  timeoutMs: 1000,
  nativeBatches: false,
};
export const choice = (): KeyChoice => ({ affinity: () => 7, triedKeys: [], judgedKey: undefined });

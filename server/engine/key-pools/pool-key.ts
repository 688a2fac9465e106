import { createHash } from "node:crypto";

/** One key of a provider's pool, as GATEWAY_CONFIG lists it (`api_keys`). */
export interface PoolKey {
  /** Never logged, stored, shown or sent to another instance. */
  secret: string;
  /** Its share of the calls, relative to the other keys' weights. */
  weight: number;
  /** `key-<position>` (1-based, in the order of `api_keys`): how logs, metrics and the console name it. */
  label: string;
  /**
   * The first 12 hex digits of the secret's SHA-256: how instances name the key to each other.
   * A key changed in the configuration gets a new fingerprint, so no old verdict applies to it.
   */
  fingerprint: string;
  /** Its seed in the rendezvous hash (key-choice.ts), from the fingerprint. */
  seed: number;
}

export function poolKey(secret: string, weight: number, position: number): PoolKey {
  const fingerprint = createHash("sha256").update(secret).digest("hex").slice(0, 12);
  return {
    secret,
    weight,
    label: `key-${position + 1}`,
    fingerprint,
    seed: Number.parseInt(fingerprint.slice(0, 8), 16),
  };
}

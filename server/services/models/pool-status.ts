import type { KeyHealth } from "../../engine/key-pools/key-pool.js";

/**
 * A provider's key pool as a whole, in the numbers of an endpoint's `status`: 0 when every key
 * takes calls (or the provider has no pool), -1 when some keys rest or were refused, -2 when none
 * can take a call now. It is all a caller without a management key learns of the keys.
 */
export function poolStatus(keys: readonly KeyHealth[] | undefined): 0 | -1 | -2 {
  if (keys === undefined) return 0;
  const healthy = keys.filter((key) => key.state === "healthy").length;
  if (healthy === keys.length) return 0;
  return healthy === 0 ? -2 : -1;
}

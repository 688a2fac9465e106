import { startLeasedWorker, type LeasedWorker } from "../../platform/workers/leased-worker.js";
import type { ResponseCacheConfig } from "../../platform/config.js";
import type { Logger } from "../../platform/logger.js";
import type { ResponseCache } from "./response-cache.js";

/**
 * The cache's maintenance on the leased-worker loop: every `sweepMs`, expired entries go, then,
 * while PostgreSQL holds more than GATEWAY_CACHE_MAX_BYTES, the oldest of the workspaces above
 * their fair share (response-cache-store.ts). It claims no work; every
 * instance sweeps, and a sweep that meets another's finds less to delete.
 */
export function startCacheSweeper(cache: ResponseCache, config: ResponseCacheConfig, log: Logger): LeasedWorker {
  return startLeasedWorker<never>({
    name: "response cache sweeper",
    log,
    concurrency: 1,
    pollMs: config.sweepMs,
    claim: async () => [],
    sweep: () => cache.sweep(),
    sweepEveryMs: config.sweepMs,
  });
}

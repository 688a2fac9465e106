import type { Sequelize } from "sequelize";
import { endpointCalls } from "./catalog-store.js";

/**
 * Health and speed of endpoints, computed from the calls recorded in usage_ledger:
 * - latency: time to first byte (`latency_ms`) of successful calls in the last 30 minutes;
 * - throughput: completion tokens per second of generation after the first byte
 *   (`completion_tokens / (generation_ms - latency_ms)`), successful calls with tokens, 30 minutes;
 * - uptime: the percentage of calls that did not fail because of the upstream. A success counts as
 *   up, an `error` with an HTTP status of 500 or more as down; client errors (4xx) and cancelled
 *   calls say nothing about the upstream and are not counted.
 * Every figure is null when there were no such calls.
 */
export interface Percentiles {
  p50: number;
  p75: number;
  p90: number;
  p99: number;
}

export interface EndpointStats {
  latencyLast30m: Percentiles | null;
  throughputLast30m: Percentiles | null;
  uptimeLast5m: number | null;
  uptimeLast30m: number | null;
  uptimeLast1d: number | null;
}

export const NO_STATS: EndpointStats = Object.freeze({
  latencyLast30m: null,
  throughputLast30m: null,
  uptimeLast5m: null,
  uptimeLast30m: null,
  uptimeLast1d: null,
});

/** Stats of every id asked for (NO_STATS for endpoints without calls), in one statement. */
export async function endpointStats(
  sequelize: Sequelize,
  endpointIds: readonly string[],
): Promise<Map<string, EndpointStats>> {
  const stats = new Map<string, EndpointStats>(endpointIds.map((id) => [id, NO_STATS]));
  if (endpointIds.length === 0) return stats;
  for (const row of await endpointCalls(sequelize, endpointIds)) {
    stats.set(row.endpoint_id, {
      latencyLast30m: percentiles(row.latency),
      throughputLast30m: percentiles(row.throughput),
      uptimeLast5m: uptime(row.calls_5m, row.down_5m),
      uptimeLast30m: uptime(row.calls_30m, row.down_30m),
      uptimeLast1d: uptime(row.calls_1d, row.down_1d),
    });
  }
  return stats;
}

function percentiles(values: Array<number | string | null> | null): Percentiles | null {
  if (values?.length !== 4 || values.some((v) => v === null)) return null;
  const [p50, p75, p90, p99] = values.map((v) => round(Number(v)));
  return { p50: p50!, p75: p75!, p90: p90!, p99: p99! };
}

function uptime(calls: string, down: string): number | null {
  const total = Number(calls);
  return total === 0 ? null : round(((total - Number(down)) / total) * 100);
}

/** Two decimals: more would be noise, and stable numbers make the listing cacheable. */
function round(value: number): number {
  return Math.round(value * 100) / 100;
}

export interface EndpointStatsCache {
  /**
   * Stats of the given endpoints. Ids seen before answer at once from memory, even when stale
   * (a refresh then starts in the background, at most one at a time and one per ttl); only ids
   * never loaded make the caller wait, for one query.
   */
  get(endpointIds: readonly string[]): Promise<Map<string, EndpointStats>>;
  /**
   * The same without ever waiting: what is in memory now (NO_STATS for ids never loaded). Unknown
   * ids and stale data start a background load, whose failures go to `onError`.
   */
  peek(endpointIds: readonly string[]): Map<string, EndpointStats>;
}

/**
 * The router's view of endpoint stats on the hot path. The set of endpoints a gateway routes to is
 * bounded (its catalog plus organizations' private endpoints), so every id ever asked for is kept
 * and refreshed together in one statement.
 */
export function createEndpointStatsCache(
  sequelize: Sequelize,
  ttlMs: number,
  onError: (err: unknown) => void = () => {},
): EndpointStatsCache {
  let known = new Map<string, EndpointStats>();
  let loadedAt = 0;
  let inflight: Promise<void> | undefined;

  function load(extra: readonly string[]): Promise<void> {
    const ids = [...new Set([...known.keys(), ...extra])];
    const startedAt = Date.now();
    const run = endpointStats(sequelize, ids)
      .then((fresh) => {
        // Ids first asked for while this query ran are kept; the next refresh includes them.
        for (const [id, stats] of known) if (!fresh.has(id)) fresh.set(id, stats);
        known = fresh;
      })
      .catch((err: unknown) => {
        // Remembered as "no stats" so that callers stop waiting; the next refresh retries them.
        for (const id of extra) if (!known.has(id)) known.set(id, NO_STATS);
        throw err;
      })
      .finally(() => {
        // A failed refresh also waits a ttl before the next try, so a sick database is not hammered.
        loadedAt = startedAt;
        if (inflight === run) inflight = undefined;
      });
    inflight = run;
    return run;
  }

  const missingOf = (ids: readonly string[]) => ids.filter((id) => !known.has(id));
  const pick = (ids: readonly string[]) => new Map(ids.map((id) => [id, known.get(id) ?? NO_STATS]));
  const stale = () => Date.now() - loadedAt >= ttlMs;

  return {
    async get(endpointIds) {
      let missing = missingOf(endpointIds);
      if (missing.length > 0 && inflight) {
        // Requests arriving together at a cold start share the first query.
        await inflight.catch(() => undefined);
        missing = missingOf(endpointIds);
      }
      if (missing.length > 0) await load(missing);
      else if (stale() && !inflight) load([]).catch(onError);
      return pick(endpointIds);
    },

    peek(endpointIds) {
      const missing = missingOf(endpointIds);
      if (!inflight && (missing.length > 0 || stale())) load(missing).catch(onError);
      return pick(endpointIds);
    },
  };
}

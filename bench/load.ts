import { Pool } from "undici";

/**
 * A small closed-loop load generator: `connections` clients each send the next request as soon as
 * the previous answer is read, for `durationMs` after a warm-up. Records every latency.
 */
export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  latenciesMs: number[];
}

export interface LoadOptions {
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationMs: number;
  warmupMs: number;
  /** The status a good answer has (200 unless the run measures a refusal path). */
  expectStatus?: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1 });
  const send = async (): Promise<boolean> => {
    const res = await pool.request({ method: "POST", path: options.path, headers: options.headers, body: options.body });
    await res.body.arrayBuffer();
    return res.statusCode === (options.expectStatus ?? 200);
  };
  const loop = async (until: number, record: number[] | undefined, errors: { n: number }) => {
    while (performance.now() < until) {
      const started = performance.now();
      const ok = await send();
      if (!ok) errors.n++;
      record?.push(performance.now() - started);
    }
  };
  const ignored = { n: 0 };
  const warmupEnd = performance.now() + options.warmupMs;
  await Promise.all(Array.from({ length: options.connections }, () => loop(warmupEnd, undefined, ignored)));
  const latencies: number[] = [];
  const errors = { n: 0 };
  const started = performance.now();
  await Promise.all(Array.from({ length: options.connections }, () => loop(started + options.durationMs, latencies, errors)));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { requests: latencies.length, errors: errors.n, seconds, rps: latencies.length / seconds, latenciesMs: latencies };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

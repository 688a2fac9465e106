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
  /** Time to the first byte of each answer's body (a stream's first event). */
  firstByteMs: number[];
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
  const send = async (started: number, firstByte: number[] | undefined): Promise<boolean> => {
    const res = await pool.request({
      method: "POST",
      path: options.path,
      headers: options.headers,
      body: options.body,
    });
    let first = true;
    for await (const _chunk of res.body) {
      if (first) firstByte?.push(performance.now() - started);
      first = false;
    }
    return res.statusCode === (options.expectStatus ?? 200);
  };
  const loop = async (
    until: number,
    record: { latencies: number[]; firstByte: number[] } | undefined,
    errors: { n: number },
  ) => {
    while (performance.now() < until) {
      const started = performance.now();
      const ok = await send(started, record?.firstByte);
      if (!ok) errors.n++;
      record?.latencies.push(performance.now() - started);
    }
  };
  const ignored = { n: 0 };
  const warmupEnd = performance.now() + options.warmupMs;
  await Promise.all(Array.from({ length: options.connections }, () => loop(warmupEnd, undefined, ignored)));
  const record = { latencies: [] as number[], firstByte: [] as number[] };
  const errors = { n: 0 };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.connections }, () => loop(started + options.durationMs, record, errors)),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return {
    requests: record.latencies.length,
    errors: errors.n,
    seconds,
    rps: record.latencies.length / seconds,
    latenciesMs: record.latencies,
    firstByteMs: record.firstByte,
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

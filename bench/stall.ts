import os from "node:os";
import { Pool, request } from "undici";
import { largeSubmission } from "./batch.js";
import { startChatStack } from "./chat-stack.js";
import { percentile } from "./load.js";

/**
 * `npm run bench -- stall`: whether one large request stalls the others. Small chat
 * calls (2 connections, zero-latency mock) are timed on an idle gateway, then while a 100,000-item
 * batch (~10 MB) and a 200 MB batch are being accepted; each row gives their latency percentiles
 * and the longest gap, beside the time the large submission took to be answered 202. The batch
 * runner is off, so that only the acceptance is measured.
 */
const IDLE_MS = Number(process.env.BENCH_STALL_IDLE_MS ?? 5_000);
const CHAT = JSON.stringify({
  model: "bench/chat",
  messages: [{ role: "user", content: "Say hello" }],
  max_tokens: 16,
});

interface Probe {
  latenciesMs: number[];
  /** The longest time between two consecutive answers on one connection. */
  maxGapMs: number;
}

export async function runStallBenchmark(): Promise<void> {
  const stack = await startChatStack("stall", {
    GATEWAY_BATCH_CONCURRENCY: "0",
    GATEWAY_RATE_LIMIT_REQUESTS: "100000000",
  });
  const { gateway, key } = stack;
  try {
    const base = gateway.url;
    const many = manyItems(100_000);
    const large = largeSubmission();
    // Warm both paths once.
    await probeWhile(base, key, new Promise((resolve) => setTimeout(resolve, 1_000)));
    await submit(base, key, many);

    const rows: string[] = [];
    const row = (name: string, probe: Probe, answeredMs?: number) =>
      rows.push(
        `| ${name} | ${probe.latenciesMs.length} | ${percentile(probe.latenciesMs, 50).toFixed(2)} | ` +
          `${percentile(probe.latenciesMs, 99).toFixed(2)} | ${Math.max(...probe.latenciesMs).toFixed(1)} | ` +
          `${probe.maxGapMs.toFixed(1)} | ${answeredMs === undefined ? "" : `${(answeredMs / 1000).toFixed(2)} s`} |`,
      );
    row("idle", await probeWhile(base, key, new Promise((resolve) => setTimeout(resolve, IDLE_MS))));
    for (const [name, body] of [
      [`100,000 items (${(many.length / 2 ** 20).toFixed(1)} MiB)`, many],
      [`200 MB (${(large.length / 2 ** 20).toFixed(0)} MiB)`, large],
    ] as const) {
      const started = performance.now();
      let answeredMs = 0;
      const accepted = submit(base, key, body).then(() => (answeredMs = performance.now() - started));
      row(`while accepting ${name}`, await probeWhile(base, key, accepted), answeredMs);
    }

    const cpu = os.cpus();
    console.log(
      `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
        `Node ${process.version}, ${os.platform()} ${os.release()}`,
    );
    console.log(`Date: ${new Date().toISOString()}\n`);
    console.log(
      "| small chat calls (2 connections) | calls | p50 ms | p99 ms | max ms | longest gap ms | " +
        "large submission answered 202 after |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const line of rows) console.log(line);
  } finally {
    await stack.stop();
  }
}

/** Small calls on 2 connections until `until` settles. */
async function probeWhile(base: string, key: string, until: Promise<unknown>): Promise<Probe> {
  const pool = new Pool(base, { connections: 2 });
  let done = false;
  void until.finally(() => (done = true));
  const probe: Probe = { latenciesMs: [], maxGapMs: 0 };
  const loop = async () => {
    let last = performance.now();
    while (!done) {
      const started = performance.now();
      const res = await pool.request({
        method: "POST",
        path: "/api/v1/chat/completions",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: CHAT,
      });
      await res.body.dump();
      const now = performance.now();
      if (res.statusCode !== 200) throw new Error(`a small call answered ${res.statusCode}`);
      probe.latenciesMs.push(now - started);
      probe.maxGapMs = Math.max(probe.maxGapMs, now - last);
      last = now;
    }
  };
  await Promise.all([loop(), loop(), until]);
  await pool.close();
  return probe;
}

async function submit(base: string, key: string, body: string): Promise<void> {
  const res = await request(`${base}/api/v1/batches`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode !== 202) throw new Error(`POST /batches answered ${res.statusCode}: ${text.slice(0, 300)}`);
}

function manyItems(count: number): string {
  const items: string[] = [];
  for (let i = 0; i < count; i++)
    items.push(
      `{"custom_id":"item-${i}","body":{"messages":[{"role":"user","content":"Say hello ${i}"}],"max_tokens":16}}`,
    );
  return `{"endpoint":"/v1/chat/completions","model":"bench/chat","requests":[${items.join(",")}]}`;
}

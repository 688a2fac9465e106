import os from "node:os";
import { Pool, request } from "undici";
import { startChatStack } from "./chat-stack.js";
import { percentile } from "./load.js";

/**
 * `npm run bench -- filters`: what one tenant's content filters cost every other tenant of the
 * process. A client calls `GET /healthz` in a loop on 2 connections (the other tenant) while:
 *
 * 1. one chat call sends a body at the 1 MiB limit, under a guardrail with one of the costliest
 *    custom patterns the limits accept (docs/api/content-filters.md), on a text made to cost it
 *    most (every character a match, or a run that keeps every position live), and under the
 *    built-in detectors on text full of near misses;
 * 2. a 10,000-item batch runs under a guardrail that blocks every item (each item's result is the
 *    refusal: the time to completed is the filtering and its writing), once through the runner
 *    item by item and once for a provider with a native batch API (all items filtered before the
 *    provider gets them).
 *
 * Each row gives the call's or batch's time and the /healthz latencies meanwhile: the longest is
 * the stall another tenant saw. BENCH_QUICK=1 runs tiny sizes, to check that the benchmark works.
 */
const QUICK = process.env.BENCH_QUICK === "1";
const BODY_BYTES = QUICK ? 64 * 1024 : 1024 * 1024 - 4 * 1024;
const ITEMS = QUICK ? 200 : 10_000;
const IDLE_MS = QUICK ? 500 : 3_000;

interface Probe {
  latenciesMs: number[];
}

export async function runFiltersBenchmark(): Promise<void> {
  const stack = await startChatStack(
    "filters",
    { GATEWAY_RATE_LIMIT_REQUESTS: "100000000", GATEWAY_BATCH_NATIVE_POLL_MS: "50", GATEWAY_BATCH_POLL_MS: "20" },
    { nativeBatches: true, contextLength: 10_000_000 },
  );
  const { gateway, key } = stack;
  const base = gateway.url;
  try {
    const rows: string[] = [];
    const row = (name: string, size: string, tookMs: number | undefined, probe: Probe) =>
      rows.push(
        `| ${name.replaceAll("|", "\\|")} | ${size} | ${tookMs === undefined ? "" : `${tookMs.toFixed(0)} ms`} | ` +
          `${probe.latenciesMs.length} | ${percentile(probe.latenciesMs, 50).toFixed(2)} | ` +
          `${percentile(probe.latenciesMs, 99).toFixed(2)} | ${Math.max(...probe.latenciesMs).toFixed(1)} |`,
      );
    row("idle", "", undefined, await probeWhile(base, sleep(IDLE_MS)));

    const calls: [string, Record<string, unknown>, string][] = [
      [
        "redact `a[a-z]{0,7}b|a` (63 steps per character), every character a match",
        { content_filters: [{ pattern: "a[a-z]{0,7}b|a", label: "[R]", action: "redact" }] },
        "a",
      ],
      [
        "redact `[a-z]{1,16}[0-9]` (64 steps per character), runs of letters",
        { content_filters: [{ pattern: "[a-z]{1,16}[0-9]", label: "[R]", action: "redact" }] },
        `${"a".repeat(60)}1`,
      ],
      [
        "block `[a-z]{1,16}[0-9]`, runs of letters",
        { content_filters: [{ pattern: "[a-z]{1,16}[0-9]", action: "block" }] },
        "a".repeat(60),
      ],
      [
        "all built-in detectors, redact, near misses",
        { content_filter_builtins: BUILTINS },
        "x@1.2 +1 ignore 555-12 4111 ",
      ],
    ];
    for (const [name, guardrail, shape] of calls) {
      const callKey = await keyWithGuardrail(base, key, guardrail);
      const content = shape.repeat(Math.ceil(BODY_BYTES / shape.length)).slice(0, BODY_BYTES);
      const body = JSON.stringify({ model: "bench/chat", messages: [{ role: "user", content }], max_tokens: 16 });
      // Compiles the filters.
      await chat(base, callKey, body.slice(0, 2_000).replace(/"content":"[^"]*/, '"content":"warm up'));
      const started = performance.now();
      let tookMs = 0;
      const answered = chat(base, callKey, body).then((status) => {
        tookMs = performance.now() - started;
        return status;
      });
      const probe = await probeWhile(base, answered);
      row(
        `chat call: ${name} (answered ${await answered})`,
        `${(body.length / 2 ** 20).toFixed(2)} MiB`,
        tookMs,
        probe,
      );
    }

    const blocking = { content_filters: [{ pattern: "Say hello [0-9]+", action: "block" }] };
    for (const [name, model] of [
      ["batch through the runner, every item blocked", "bench/chat"],
      ["batch to a native batch API, every item blocked", "bench/native"],
    ] as const) {
      const batchKey = await keyWithGuardrail(base, key, blocking);
      const items = Array.from({ length: ITEMS }, (_, i) => ({
        custom_id: `item-${i}`,
        body: { model, messages: [{ role: "user", content: `Say hello ${i}` }], max_tokens: 16 },
      }));
      const submission = JSON.stringify({ endpoint: "/v1/chat/completions", model, requests: items });
      const started = performance.now();
      let tookMs = 0;
      const finished = submitAndWait(base, batchKey, submission).then((status) => {
        tookMs = performance.now() - started;
        return status;
      });
      const probe = await probeWhile(base, finished);
      row(`${name} (${await finished})`, `${ITEMS} items`, tookMs, probe);
    }

    const cpu = os.cpus();
    console.log(
      `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
        `Node ${process.version}, ${os.platform()} ${os.release()}`,
    );
    console.log(`Date: ${new Date().toISOString()}${QUICK ? " (BENCH_QUICK: tiny sizes)" : ""}\n`);
    console.log("| while | size | took | /healthz calls | p50 ms | p99 ms | max ms (the stall) |");
    console.log("|---|---|---|---|---|---|---|");
    for (const line of rows) console.log(line);
  } finally {
    await stack.stop();
  }
}

const BUILTINS = ["email", "phone", "ssn", "credit-card", "ip-address", "regex-prompt-injection"].map((slug) => ({
  slug,
  action: "redact",
}));

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `GET /healthz` in a loop on 2 connections until `until` settles: another tenant's view of the process. */
async function probeWhile(base: string, until: Promise<unknown>): Promise<Probe> {
  const pool = new Pool(base, { connections: 2 });
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  const probe: Probe = { latenciesMs: [] };
  const loop = async () => {
    while (!done) {
      const started = performance.now();
      const res = await pool.request({ method: "GET", path: "/healthz" });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`/healthz answered ${res.statusCode}`);
      probe.latenciesMs.push(performance.now() - started);
    }
  };
  await Promise.all([loop(), loop(), until]);
  await pool.close();
  return probe;
}

/** A new key under a new guardrail of these content filters. */
async function keyWithGuardrail(
  base: string,
  managementKey: string,
  guardrail: Record<string, unknown>,
): Promise<string> {
  const created = await api(base, managementKey, "POST", "/api/v1/keys", {
    name: `bench-${Math.random().toString(36).slice(2)}`,
  });
  const rail = await api(base, managementKey, "POST", "/api/v1/guardrails", {
    name: `bench-${Math.random().toString(36).slice(2)}`,
    ...guardrail,
  });
  const data = rail.data as { id: string };
  await api(base, managementKey, "POST", `/api/v1/guardrails/${data.id}/assignments/keys`, {
    key_hashes: [(created.data as { hash: string }).hash],
  });
  return created.key as string;
}

async function api(
  base: string,
  key: string,
  method: "POST",
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await request(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function chat(base: string, key: string, body: string): Promise<number> {
  const res = await request(`${base}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}

/** Submits the batch and waits until it is in a final status. */
async function submitAndWait(base: string, key: string, submission: string): Promise<string> {
  const res = await request(`${base}/api/v1/batches`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: submission,
  });
  const text = await res.body.text();
  if (res.statusCode !== 202) throw new Error(`POST /batches answered ${res.statusCode}: ${text.slice(0, 300)}`);
  const { id } = JSON.parse(text) as { id: string };
  for (;;) {
    const got = await request(`${base}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const batch = (await got.body.json()) as { status: string; request_counts: { completed: number; failed: number } };
    if (["completed", "failed", "expired", "cancelled"].includes(batch.status))
      return `${batch.status}, ${batch.request_counts.failed} refused`;
    await sleep(20);
  }
}

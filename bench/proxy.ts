import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { newKeySecret } from "../server/core/key-secret.js";
import { startEmbeddedPostgres } from "../server/db/embedded-postgres.js";
import { createLogger } from "../server/logger.js";
import { writeCatalogFile } from "../test/support/catalog-file.js";
import { freePort, startGatewayProcess } from "../test/support/gateway-process.js";
import { MOCK_UPSTREAM_API_KEY } from "../test/upstream/mock-upstream.js";
import { startChild } from "./children.js";
import { percentile, runLoad, type LoadResult } from "./load.js";

/**
 * `npm run bench -- proxy`: proxied chat completions through the whole gateway (auth, rate limit,
 * budget reservation and settlement, ledger) against the zero-latency mock upstream, beside a bare
 * node:http pass-through proxy to the same mock in the same run. Each server runs in its own
 * process; the load generator runs here. Targets (issue 4): ≥ 50% of the bare proxy's requests/s
 * at 10 connections; added latency p50 ≤ 0.4 ms and p99 ≤ 2 ms at 1 connection.
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2_000);

export async function runProxyBenchmark(): Promise<void> {
  const log = createLogger("warn");
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-bench-"));
  const postgres = await startEmbeddedPostgres(dataDir, 0, log);
  const children: ChildProcess[] = [];
  let gateway: Awaited<ReturnType<typeof startGatewayProcess>> | undefined;
  try {
    const mockPort = await freePort();
    children.push(await startChild(["test/upstream/mock-upstream.ts", "--port", String(mockPort)], /^http:/));
    const openaiBase = `http://127.0.0.1:${mockPort}/openai/v1`;
    const barePort = await freePort();
    children.push(await startChild(["bench/bare-proxy.ts", String(barePort), openaiBase], /^listening/));

    const configFile = await writeCatalogFile({
      providers: [{ slug: "mock", kind: "openai", base_url: openaiBase, api_key: MOCK_UPSTREAM_API_KEY }],
      models: [{ id: "bench/chat", name: "Bench chat", created: 1_700_000_000, context_length: 8000, endpoints: [{ provider: "mock", upstream_model_id: "bench", pricing: { prompt: "0.000001", completion: "0.000002" } }] }],
    });
    const bootstrapKey = newKeySecret();
    gateway = await startGatewayProcess({
      databaseUrl: postgres.url,
      key: bootstrapKey,
      env: {
        GATEWAY_CONFIG: configFile,
        GATEWAY_RATE_LIMIT_REQUESTS: "100000000",
        GATEWAY_RATE_LIMIT_WINDOW_SECONDS: "60",
      },
      // BENCH_CPU_PROF=<dir>: the gateway writes a V8 CPU profile there when it stops (bench/profile-summary.ts reads it).
      nodeArgs: process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
    });
    // A key with a credit limit, so that every call reserves and settles against a budget.
    const created = await fetch(`${gateway.url}/api/v1/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench", limit: 1_000_000 }),
    });
    const key = ((await created.json()) as { key: string }).key;

    const body = JSON.stringify({ model: "bench/chat", messages: [{ role: "user", content: "Say hello" }], max_tokens: 16 });
    const load = (url: string, connections: number, auth: string) =>
      runLoad({ url, path: "/api/v1/chat/completions", headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" }, body, connections, durationMs: DURATION_MS, warmupMs: WARMUP_MS });

    const bare1 = await load(`http://127.0.0.1:${barePort}`, 1, MOCK_UPSTREAM_API_KEY);
    const gateway1 = await load(gateway.url, 1, key);
    const bare10 = await load(`http://127.0.0.1:${barePort}`, 10, MOCK_UPSTREAM_API_KEY);
    const gateway10 = await load(gateway.url, 10, key);
    // The floor of the design: a call the auth interceptor refuses at once (no database, no
    // upstream) still crosses the facade and the in-process Connect transport.
    const refused = (connections: number) =>
      runLoad({ url: gateway!.url, path: "/api/v1/chat/completions", headers: { "content-type": "application/json" }, body, connections, durationMs: DURATION_MS, warmupMs: WARMUP_MS, expectStatus: 401 });
    const floor1 = await refused(1);
    const floor10 = await refused(10);

    const client = new pg.Client(postgres.url);
    await client.connect();
    const ledger = await client.query<{ n: string }>("SELECT count(*) AS n FROM usage_ledger");
    await client.end();

    report({ bare1, gateway1, bare10, gateway10, floor1, floor10, ledgerRows: Number(ledger.rows[0]?.n ?? 0) });
  } finally {
    await gateway?.stop();
    for (const child of children) child.kill("SIGTERM");
    await postgres.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

function report(r: { bare1: LoadResult; gateway1: LoadResult; bare10: LoadResult; gateway10: LoadResult; floor1: LoadResult; floor10: LoadResult; ledgerRows: number }): void {
  const ms = (v: number) => v.toFixed(3);
  const p = (result: LoadResult, q: number) => percentile(result.latenciesMs, q);
  const row = (name: string, c: number, result: LoadResult) =>
    `| ${name} | ${c} | ${Math.round(result.rps)} | ${ms(p(result, 50))} | ${ms(p(result, 99))} | ${result.errors} |`;
  const cpu = os.cpus();
  console.log(`Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`);
  console.log(`Date: ${new Date().toISOString()}; ${DURATION_MS / 1000} s per run after ${WARMUP_MS / 1000} s warm-up\n`);
  console.log("| target | connections | req/s | p50 ms | p99 ms | errors |");
  console.log("|---|---|---|---|---|---|");
  console.log(row("bare node:http proxy", 1, r.bare1));
  console.log(row("gateway", 1, r.gateway1));
  console.log(row("bare node:http proxy", 10, r.bare10));
  console.log(row("gateway", 10, r.gateway10));
  console.log(row("gateway, refused by auth (401)", 1, r.floor1));
  console.log(row("gateway, refused by auth (401)", 10, r.floor10));
  console.log("");
  console.log(`Added latency at 1 connection: p50 ${ms(p(r.gateway1, 50) - p(r.bare1, 50))} ms (target ≤ 0.4), p99 ${ms(p(r.gateway1, 99) - p(r.bare1, 99))} ms (target ≤ 2)`);
  console.log(`Throughput at 10 connections: ${((100 * r.gateway10.rps) / r.bare10.rps).toFixed(1)}% of the bare proxy (target ≥ 50%)`);
  console.log(`Ledger rows written: ${r.ledgerRows} (every gateway call, warm-up included, is accounted)`);
}

import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { newKeySecret } from "../server/platform/secrets/key-secret.js";
import { startEmbeddedPostgres } from "../server/platform/db/embedded-postgres.js";
import { createLogger } from "../server/platform/logger.js";
import { writeCatalogFile } from "../test/support/catalog-file.js";
import { freePort, startGatewayProcess, type GatewayProcess } from "../test/support/gateway-process.js";
import { MOCK_UPSTREAM_API_KEY } from "../test/upstream/mock-upstream.js";
import { startChild } from "./children.js";
import { percentile, runLoad, type LoadResult } from "./load.js";

/**
 * `npm run bench -- proxy`: proxied calls through the whole gateway (auth, governance, rate limit,
 * a key with a credit limit, admission from leases, the ledger written behind) against the
 * zero-latency mock upstream, beside a bare node:http pass-through proxy to the same mock in the
 * same run: chat completions (also to a provider with a pool of two keys, and answered from the
 * response cache), streamed chat (time to
 * first byte), embeddings, the auth refusal floor, and two gateway instances on one database
 * (aggregate req/s, and whether a limit held).
 * Each server runs in its own process; the load generator runs here. Targets (docs/benchmarks.md):
 * ≥ 50% of the bare proxy's req/s at 10 connections; added latency p50 ≤ 0.4 ms, p99 ≤ 2 ms at 1
 * connection; streamed: added time to first byte p50 ≤ 0.5 ms; embeddings as chat.
 *
 * BENCH_DURATION_MS / BENCH_WARMUP_MS: length of each run; BENCH_ONLY=<row,…>: only these rows
 * (names as printed, e.g. "gateway chat 10"), for profiling with BENCH_CPU_PROF=<dir> (the first
 * gateway writes a V8 CPU profile there when it stops; bench/profile-summary.ts reads it).
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2_000);
const ONLY = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
/** Calls the key of the two-instance limit run may pay for. */
const LIMITED_CALLS = 2_000;

const CHAT = JSON.stringify({
  model: "bench/chat",
  messages: [{ role: "user", content: "Say hello" }],
  max_tokens: 16,
});
const STREAM = JSON.stringify({
  model: "bench/chat",
  messages: [{ role: "user", content: "Say hello" }],
  max_tokens: 16,
  stream: true,
});
const EMBED = JSON.stringify({ model: "bench/embed", input: "Say hello" });
/** The same call to a provider with a pool of two keys: what choosing a key costs. */
const POOLED_CHAT = JSON.stringify({
  model: "bench/pooled",
  messages: [{ role: "user", content: "Say hello" }],
  max_tokens: 16,
});
/** A 4 KB prompt of plain prose with an email, a phone number, a card number and a project code every ~1 KB. */
const FILTERED_PROMPT = Array.from(
  { length: 4 },
  (_, i) =>
    `${"The quarterly report covers revenue, churn and hiring across every region we operate in. ".repeat(11)}` +
    `Contact ops${i}@example.com or +1 (555) 010-${1000 + i}, card 4111 1111 1111 1111, ` +
    `Project Apollo-${100 + i}. `,
).join("");
const FILTERED_CHAT = JSON.stringify({
  model: "bench/chat",
  messages: [{ role: "user", content: FILTERED_PROMPT }],
  max_tokens: 16,
});
const PRICES = {
  chat: { prompt: "0.000001", completion: "0.000002" },
  embed: { prompt: "0.0000001", completion: "0" },
};

interface Row {
  name: string;
  connections: number;
  result: LoadResult;
  /** CPU the serving process(es) used per call (user + system), warm-up excluded. */
  cpuUsPerCall: number | null;
}

export async function runProxyBenchmark(): Promise<void> {
  const log = createLogger("warn");
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-bench-"));
  const postgres = await startEmbeddedPostgres(dataDir, 0, log);
  const children: ChildProcess[] = [];
  const gateways: GatewayProcess[] = [];
  try {
    const mockPort = await freePort();
    children.push(await startChild(["test/upstream/mock-upstream.ts", "--port", String(mockPort)], /^http:/));
    const openaiBase = `http://127.0.0.1:${mockPort}/openai/v1`;
    const barePort = await freePort();
    const bareChild = await startChild(["bench/bare-proxy.ts", String(barePort), openaiBase], /^listening/);
    children.push(bareChild);
    const bare = `http://127.0.0.1:${barePort}`;

    const configFile = await writeCatalogFile({
      providers: [
        { slug: "mock", kind: "openai", base_url: openaiBase, api_key: MOCK_UPSTREAM_API_KEY },
        {
          slug: "mock-pool",
          kind: "openai",
          base_url: openaiBase,
          api_keys: [`${MOCK_UPSTREAM_API_KEY}-a`, `${MOCK_UPSTREAM_API_KEY}-b`],
        },
      ],
      models: [
        {
          id: "bench/chat",
          name: "Bench chat",
          created: 1_700_000_000,
          context_length: 8000,
          endpoints: [{ provider: "mock", upstream_model_id: "bench", pricing: PRICES.chat }],
        },
        {
          id: "bench/pooled",
          name: "Bench pooled chat",
          created: 1_700_000_000,
          context_length: 8000,
          endpoints: [{ provider: "mock-pool", upstream_model_id: "bench", pricing: PRICES.chat }],
        },
        {
          id: "bench/embed",
          name: "Bench embed",
          created: 1_700_000_000,
          context_length: 8000,
          output_modalities: ["embeddings"],
          endpoints: [{ provider: "mock", upstream_model_id: "embed", pricing: PRICES.embed }],
        },
      ],
    });
    const bootstrapKey = newKeySecret();
    const start = (profile: boolean, workers = 1) =>
      startGatewayProcess({
        databaseUrl: postgres.url,
        key: bootstrapKey,
        env: {
          GATEWAY_CONFIG: configFile,
          GATEWAY_RATE_LIMIT_REQUESTS: "100000000",
          GATEWAY_RATE_LIMIT_WINDOW_SECONDS: "60",
          GATEWAY_WORKERS: String(workers),
        },
        ...(workers > 1 ? { ready: "all workers listening" } : {}),
        nodeArgs:
          profile && process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
      });
    const gateway = await start(true);
    gateways.push(gateway);
    // A key with a credit limit, so that every call is admitted and settled against a budget.
    const key = await createKey(gateway.url, bootstrapKey, 1_000_000);

    const rows: Row[] = [];
    const run = async (
      name: string,
      connections: number,
      base: string | string[],
      auth: string,
      body: string,
      route: string,
      expectStatus = 200,
      headers: Record<string, string> = {},
    ) => {
      if (ONLY && !ONLY.includes(`${name} ${connections}`)) return undefined;
      const bases = Array.isArray(base) ? base : [base];
      // The proxy's own CPU (the bare proxy's too), so a row says what a call costs the process that serves it.
      const pids = bases.includes(bare)
        ? [bareChild.pid!]
        : gateways.filter((g) => bases.includes(g.url)).flatMap(processesOf);
      // The measured part only: runLoad warms up first, so the CPU is read once warm-up is over.
      let cpuBefore = 0;
      const warm = setTimeout(() => (cpuBefore = cpuMs(pids)), WARMUP_MS);
      // Several bases: the connections are split evenly, and the results add up.
      const parts = await Promise.all(
        bases.map((url) =>
          runLoad({
            url,
            path: route,
            headers: {
              ...(auth ? { authorization: `Bearer ${auth}` } : {}),
              "content-type": "application/json",
              ...headers,
            },
            body,
            connections: Math.max(1, Math.round(connections / bases.length)),
            durationMs: DURATION_MS,
            warmupMs: WARMUP_MS,
            expectStatus,
          }),
        ),
      );
      const result = parts.reduce((a, b) => ({
        requests: a.requests + b.requests,
        errors: a.errors + b.errors,
        seconds: Math.max(a.seconds, b.seconds),
        rps: a.rps + b.rps,
        latenciesMs: [...a.latenciesMs, ...b.latenciesMs],
        firstByteMs: [...a.firstByteMs, ...b.firstByteMs],
      }));
      clearTimeout(warm);
      const cpuUsPerCall = pids.length > 0 ? ((cpuMs(pids) - cpuBefore) * 1000) / result.requests : null;
      rows.push({ name, connections, result, cpuUsPerCall });
      return result;
    };
    const chatPath = "/api/v1/chat/completions";
    const embedPath = "/api/v1/embeddings";
    for (const connections of [1, 10]) {
      await run("bare chat", connections, bare, MOCK_UPSTREAM_API_KEY, CHAT, chatPath);
      await run("gateway chat", connections, gateway.url, key, CHAT, chatPath);
      await run("gateway chat two-key pool", connections, gateway.url, key, POOLED_CHAT, chatPath);
    }
    // The same call with the response cache asked for: the warm-up's first call fills the entry, every later one hits.
    await run("gateway chat cache hit", 10, gateway.url, key, CHAT, chatPath, 200, { "x-gateway-cache-ttl": "3600" });
    await run("bare streamed chat", 1, bare, MOCK_UPSTREAM_API_KEY, STREAM, chatPath);
    await run("gateway streamed chat", 1, gateway.url, key, STREAM, chatPath);
    for (const connections of [1, 10]) {
      await run("bare embeddings", connections, bare, MOCK_UPSTREAM_API_KEY, EMBED, embedPath);
      await run("gateway embeddings", connections, gateway.url, key, EMBED, embedPath);
    }
    if (!ONLY || ONLY.includes("gateway chat content-filtered 10")) {
      // Three built-in detectors and one RE2 pattern over a 4 KB prompt that holds some of each.
      const filteredKey = await keyWithGuardrail(gateway.url, bootstrapKey, {
        content_filter_builtins: [
          { slug: "email", action: "redact" },
          { slug: "phone", action: "redact" },
          { slug: "credit-card", action: "redact" },
        ],
        content_filters: [{ pattern: "(?i)project\\s+[a-z]+-\\d{3}", label: "[PROJECT]", action: "redact" }],
      });
      await run("gateway chat content-filtered", 10, gateway.url, filteredKey, FILTERED_CHAT, chatPath);
    }
    // The floor of the design: a call the auth interceptor refuses (no upstream, no database).
    await run("gateway refused by auth (401)", 1, gateway.url, "", CHAT, chatPath, 401);
    await run("gateway refused by auth (401)", 10, gateway.url, "", CHAT, chatPath, 401);

    let limitReport = "";
    if (!ONLY || ONLY.some((name) => name.startsWith("two gateways"))) {
      const second = await start(false);
      gateways.push(second);
      await run("two gateways chat", 10, [gateway.url, second.url], key, CHAT, chatPath);
      // A key that can pay for LIMITED_CALLS calls' worst case, hammered from both instances.
      const estimate = 9 * 1e-6 + 16 * 2e-6;
      const limited = await createKey(gateway.url, bootstrapKey, LIMITED_CALLS * estimate);
      const limitedRun = await run("two gateways, limited key", 10, [gateway.url, second.url], limited, CHAT, chatPath);
      if (limitedRun) {
        const answered = limitedRun.requests - limitedRun.errors;
        const spent = await spentOf(postgres.url, limited);
        limitReport =
          `Two instances, a key limited to $${(LIMITED_CALLS * estimate).toFixed(6)} (${LIMITED_CALLS} ` +
          `calls' worst case): ${answered} answered 200 during the measured run (warm-up calls spend too), ` +
          `settled spend $${spent.spent} + leased $${spent.leased} (≤ the limit: ` +
          `${spent.spent + spent.leased <= LIMITED_CALLS * estimate + 1e-9 ? "held" : "EXCEEDED"}).`;
      }
    }

    if (!ONLY || ONLY.includes("gateway 2 workers chat 10")) {
      // One gateway as a primary and two workers sharing its port (GATEWAY_WORKERS); its CPU is theirs together.
      const workers = await start(false, 2);
      gateways.push(workers);
      await run("gateway 2 workers chat", 10, workers.url, key, CHAT, chatPath);
      await gateways.splice(gateways.indexOf(workers), 1)[0]!.stop();
    }

    for (const g of gateways.splice(0)) await g.stop();
    const client = new pg.Client(postgres.url);
    await client.connect();
    const ledger = await client.query<{ n: string }>("SELECT count(*) AS n FROM usage_ledger");
    await client.end();
    report(rows, Number(ledger.rows[0]?.n ?? 0), limitReport);
  } finally {
    for (const g of gateways) await g.stop();
    for (const child of children) child.kill("SIGTERM");
    await postgres.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * A gateway's process and, when it runs GATEWAY_WORKERS, its workers (their "gateway listening"
 * lines carry their pids).
 */
function processesOf(gateway: GatewayProcess): number[] {
  const workers = gateway.lines.flatMap((line) => {
    const pid = /"pid":(\d+).*"msg":"gateway listening"/.exec(line)?.[1];
    return pid ? [Number(pid)] : [];
  });
  return [gateway.child.pid!, ...workers];
}

/** User + system CPU of these processes so far (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

async function createKey(base: string, managementKey: string, limit: number): Promise<string> {
  const created = await fetch(`${base}/api/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `bench-${Math.random().toString(36).slice(2)}`, limit }),
  });
  return ((await created.json()) as { key: string }).key;
}

/** A key (with a generous limit) that a new guardrail of these fields is assigned to. */
async function keyWithGuardrail(
  base: string,
  managementKey: string,
  guardrail: Record<string, unknown>,
): Promise<string> {
  const headers = { authorization: `Bearer ${managementKey}`, "content-type": "application/json" };
  const key = await createKey(base, managementKey, 1_000_000);
  const hash = createHash("sha256").update(key).digest("hex");
  const created = await fetch(`${base}/api/v1/guardrails`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: `bench-${hash.slice(0, 8)}`, ...guardrail }),
  });
  const { data } = (await created.json()) as { data: { id: string } };
  await fetch(`${base}/api/v1/guardrails/${data.id}/assignments/keys`, {
    method: "POST",
    headers,
    body: JSON.stringify({ key_hashes: [hash] }),
  });
  return key;
}

async function spentOf(databaseUrl: string, key: string): Promise<{ spent: number; leased: number }> {
  const hash = createHash("sha256").update(key).digest("hex");
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ spent: string; leased: string }>(
      `SELECT (SELECT coalesce(sum(spent_usd), 0) FROM usage_counters
                WHERE scope = 'key' AND scope_id = $1 AND period = 'lifetime')::text AS spent,
              (SELECT coalesce(sum(granted), 0) FROM admission_leases WHERE quantity = $2)::text AS leased`,
      [hash, `key:${hash}:lifetime`],
    );
    return { spent: Number(rows[0]!.spent), leased: Number(rows[0]!.leased) };
  } finally {
    await client.end();
  }
}

function report(rows: Row[], ledgerRows: number, limitReport: string): void {
  const ms = (v: number) => v.toFixed(3);
  const p = (values: number[], q: number) => percentile(values, q);
  const cpu = os.cpus();
  console.log(
    `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `Node ${process.version}, ${os.platform()} ${os.release()}`,
  );
  console.log(
    `Date: ${new Date().toISOString()}; ${DURATION_MS / 1000} s per run after ${WARMUP_MS / 1000} s warm-up\n`,
  );
  console.log("| target | connections | req/s | p50 ms | p99 ms | first byte p50 ms | proxy CPU µs/call | errors |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const { name, connections, result, cpuUsPerCall } of rows) {
    const cpu = cpuUsPerCall === null ? "" : String(Math.round(cpuUsPerCall));
    console.log(
      `| ${name} | ${connections} | ${Math.round(result.rps)} | ${ms(p(result.latenciesMs, 50))} | ` +
        `${ms(p(result.latenciesMs, 99))} | ${ms(p(result.firstByteMs, 50))} | ${cpu} | ${result.errors} |`,
    );
  }
  console.log("");
  const find = (name: string, connections: number) =>
    rows.find((r) => r.name === name && r.connections === connections)?.result;
  const compare = (what: string, gatewayName: string, bareName: string) => {
    const g1 = find(gatewayName, 1);
    const b1 = find(bareName, 1);
    if (g1 && b1) {
      console.log(
        `${what}, added latency at 1 connection: p50 ${ms(p(g1.latenciesMs, 50) - p(b1.latenciesMs, 50))} ms, ` +
          `p99 ${ms(p(g1.latenciesMs, 99) - p(b1.latenciesMs, 99))} ms, first byte p50 ` +
          `${ms(p(g1.firstByteMs, 50) - p(b1.firstByteMs, 50))} ms`,
      );
    }
    const g10 = find(gatewayName, 10);
    const b10 = find(bareName, 10);
    if (g10 && b10)
      console.log(
        `${what}, throughput at 10 connections: ${((100 * g10.rps) / b10.rps).toFixed(1)}% of the bare proxy`,
      );
  };
  compare("Chat", "gateway chat", "bare chat");
  compare("Streamed chat", "gateway streamed chat", "bare streamed chat");
  compare("Embeddings", "gateway embeddings", "bare embeddings");
  const two = find("two gateways chat", 10);
  const one = find("gateway chat", 10);
  if (two && one)
    console.log(
      `Two instances on one database: ${Math.round(two.rps)} req/s together (${(two.rps / one.rps).toFixed(2)}× one ` +
        "instance; both share these 2 cores)",
    );
  if (limitReport) console.log(limitReport);
  console.log(`Ledger rows written: ${ledgerRows} (one per call answered, warm-up included; refusals write none)`);
}

import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { newKeySecret } from "../server/platform/secrets/key-secret.js";
import { startEmbeddedPostgres } from "../server/platform/db/embedded-postgres.js";
import { createLogger } from "../server/platform/logger.js";
import { writeCatalogFile } from "../test/support/catalog-file.js";
import { freePort, startGatewayProcess } from "../test/support/gateway-process.js";
import { MOCK_UPSTREAM_API_KEY } from "../test/upstream/mock-upstream.js";
import { startChild } from "./children.js";
import { percentile } from "./load.js";

/**
 * `npm run bench -- streams-burst`: N streamed chat calls opened at once against a slow provider
 * (the mock streams CHUNKS words, one every CHUNK_MS), through the gateway and, in the same run,
 * through a bare node:http streaming proxy (bench/bare-proxy.ts) to the same mock: what a burst
 * of long streams costs beyond forwarding bytes. Per target: streams that completed, failures by
 * kind (status, ECONNRESET, …), time to the first byte (p50, p99), the worst stall (the longest
 * gap between two chunks of one stream beyond CHUNK_MS), the kernel's accept-queue overflows
 * during the round (TcpExt ListenOverflows), and the serving process's RSS idle and at its peak.
 *
 * BENCH_STREAMS (3,000), BENCH_CHUNKS (20), BENCH_CHUNK_MS (250); BENCH_ONLY=bare|gateway;
 * BENCH_CPU_PROF=<dir>: the gateway writes a V8 CPU profile there when it stops.
 */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 3_000);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20);
const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 250);
const ONLY = process.env.BENCH_ONLY;

interface StreamOutcome {
  firstByteMs: number | undefined;
  /** The longest gap between two chunks of the answer, in ms. */
  longestGapMs: number;
  /** undefined when the stream ended with `[DONE]`; else the failure's kind. */
  failure: string | undefined;
}

interface Round {
  target: string;
  outcomes: StreamOutcome[];
  overflows: number;
  rssIdleMiB: number;
  rssPeakMiB: number;
  wallS: number;
}

export async function runStreamsBurstBenchmark(): Promise<void> {
  const log = createLogger("warn");
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-bench-burst-"));
  const postgres = await startEmbeddedPostgres(dataDir, 0, log);
  const children: ChildProcess[] = [];
  let stopGateway: (() => Promise<unknown>) | undefined;
  try {
    const reply = Array.from({ length: CHUNKS }, (_, i) => `w${i}`).join(" ");
    const mockPort = await freePort();
    const rule = JSON.stringify({ reply, chunkDelayMs: CHUNK_MS });
    children.push(
      await startChild(["test/upstream/mock-upstream.ts", "--port", String(mockPort), "--rule", rule], /^http:/),
    );
    const openaiBase = `http://127.0.0.1:${mockPort}/openai/v1`;
    const barePort = await freePort();
    const bare = await startChild(["bench/bare-proxy.ts", String(barePort), openaiBase], /^listening/);
    children.push(bare);
    const configFile = await writeCatalogFile({
      providers: [{ slug: "mock", kind: "openai", base_url: openaiBase, api_key: MOCK_UPSTREAM_API_KEY }],
      models: [
        {
          id: "bench/chat",
          name: "Bench chat",
          created: 1_700_000_000,
          context_length: 8000,
          endpoints: [
            { provider: "mock", upstream_model_id: "bench", pricing: { prompt: "0.000001", completion: "0.000002" } },
          ],
        },
      ],
    });
    const key = newKeySecret();
    const gateway = await startGatewayProcess({
      databaseUrl: postgres.url,
      key,
      env: { GATEWAY_CONFIG: configFile, GATEWAY_RATE_LIMIT_REQUESTS: "0" },
      nodeArgs: process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
    });
    stopGateway = () => gateway.stop();
    const body = JSON.stringify({
      model: "bench/chat",
      stream: true,
      messages: [{ role: "user", content: "Count for me" }],
    });

    const rounds: Round[] = [];
    if (ONLY !== "gateway")
      rounds.push(
        await burst("bare streaming proxy", barePort, bare.pid!, body, {
          authorization: `Bearer ${MOCK_UPSTREAM_API_KEY}`,
        }),
      );
    if (ONLY !== "bare")
      rounds.push(
        await burst("gateway", gateway.httpPort, gateway.child.pid!, body, { authorization: `Bearer ${key}` }),
      );
    report(rounds);
  } finally {
    await stopGateway?.();
    for (const child of children) child.kill("SIGTERM");
    await postgres.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** Opens every stream at once (one connection each, no pooling: a burst of new clients) and reads them to the end. */
async function burst(
  target: string,
  port: number,
  pid: number,
  body: string,
  headers: Record<string, string>,
): Promise<Round> {
  // Warm the path once, so the round measures the burst and not the first call's module loading.
  await oneStream(port, body, headers, performance.now());
  const rssIdleMiB = rssMiB(pid);
  let rssPeakMiB = rssIdleMiB;
  const sampler = setInterval(() => (rssPeakMiB = Math.max(rssPeakMiB, rssMiB(pid))), 100);
  const overflowsBefore = listenOverflows();
  const started = performance.now();
  const outcomes = await Promise.all(Array.from({ length: STREAMS }, () => oneStream(port, body, headers, started)));
  const wallS = (performance.now() - started) / 1000;
  clearInterval(sampler);
  return { target, outcomes, overflows: listenOverflows() - overflowsBefore, rssIdleMiB, rssPeakMiB, wallS };
}

function oneStream(
  port: number,
  body: string,
  headers: Record<string, string>,
  started: number,
): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    let firstByteMs: number | undefined;
    let last = 0;
    let longestGapMs = 0;
    let tail = "";
    const done = (failure: string | undefined) => resolve({ firstByteMs, longestGapMs, failure });
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/v1/chat/completions",
        agent: false,
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          done(`HTTP ${res.statusCode}`);
          return;
        }
        res.on("data", (chunk: Buffer) => {
          const now = performance.now();
          if (firstByteMs === undefined) firstByteMs = now - started;
          else longestGapMs = Math.max(longestGapMs, now - last);
          last = now;
          tail = (tail + chunk.toString("latin1")).slice(-32);
        });
        res.on("end", () => done(tail.includes("data: [DONE]") ? undefined : "ended without [DONE]"));
        res.on("error", (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    req.end(body);
  });
}

function report(rounds: Round[]): void {
  const cpu = os.cpus();
  console.log(
    `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `Node ${process.version}, ${os.platform()} ${os.release()}`,
  );
  console.log(`Date: ${new Date().toISOString()}`);
  console.log(
    `Command: npm run bench -- streams-burst (BENCH_STREAMS=${STREAMS}, BENCH_CHUNKS=${CHUNKS}, ` +
      `BENCH_CHUNK_MS=${CHUNK_MS})\n`,
  );
  console.log(
    "| target | complete | failures | first byte p50 / p99 | worst stall | accept-queue overflows | " +
      "RSS idle → peak | RSS per stream | wall |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const round of rounds) {
    const firstBytes = round.outcomes.flatMap((o) => (o.firstByteMs === undefined ? [] : [o.firstByteMs]));
    const failures = new Map<string, number>();
    for (const { failure } of round.outcomes) if (failure) failures.set(failure, (failures.get(failure) ?? 0) + 1);
    const complete = round.outcomes.length - [...failures.values()].reduce((a, b) => a + b, 0);
    const stall = Math.max(0, ...round.outcomes.map((o) => o.longestGapMs - CHUNK_MS));
    const perStreamKiB = ((round.rssPeakMiB - round.rssIdleMiB) * 1024) / round.outcomes.length;
    const failureText = failures.size === 0 ? "none" : [...failures].map(([kind, n]) => `${n} ${kind}`).join(", ");
    console.log(
      `| ${round.target} | ${complete} / ${round.outcomes.length} | ${failureText} | ` +
        `${ms(percentile(firstBytes, 50))} / ${ms(percentile(firstBytes, 99))} | ${ms(stall)} | ` +
        `${round.overflows} | ${round.rssIdleMiB} → ${round.rssPeakMiB} MiB | ${perStreamKiB.toFixed(1)} KiB | ` +
        `${round.wallS.toFixed(1)} s |`,
    );
  }
}

const ms = (value: number) => (value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`);

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** TcpExt ListenOverflows from /proc/net/netstat: connections the kernel dropped because an accept queue was full. */
function listenOverflows(): number {
  const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
  const index = lines.findIndex((line) => line.startsWith("TcpExt:"));
  if (index === -1) return 0;
  const names = lines[index]!.split(/\s+/);
  const values = lines[index + 1]!.split(/\s+/);
  return Number(values[names.indexOf("ListenOverflows")] ?? 0);
}

import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { startChatStack } from "./chat-stack.js";

/**
 * `npm run bench -- batch`: 10,000 chat items submitted in one POST /batches (time to the 202),
 * then run by the gateway's batch runner against the zero-latency mock upstream until the batch
 * is completed (items/s); then the same submission again BENCH_BATCH_REPEATS times (warm, each
 * cancelled once accepted); then a submission of almost 200 MB (time to the 202). The gateway runs
 * in its own process; its peak RSS (VmHWM) is read after each phase, and the CPU time the gateway
 * and PostgreSQL (postmaster and backends) spent in each submission. Targets (docs/benchmarks.md):
 * the 202 for 10,000 items in under 0.5 s, ≥ 1,000 items/s on this 2-core machine, the 200 MB
 * submission accepted with a peak RSS under 1 GiB.
 *
 * BENCH_BATCH_SUBMIT_ONLY=1: the runner is off (GATEWAY_BATCH_CONCURRENCY=0) and the run phase is
 * skipped, so that a CPU profile (BENCH_CPU_PROF=<dir>: the gateway writes a V8 CPU profile there
 * when it stops; bench/profile-summary.ts reads it) shows the submissions alone.
 * BENCH_BATCH_LARGE=0 skips the 200 MB submission.
 */
const ITEMS = Number(process.env.BENCH_BATCH_ITEMS ?? 10_000);
const REPEATS = Number(process.env.BENCH_BATCH_REPEATS ?? 3);
const SUBMIT_ONLY = process.env.BENCH_BATCH_SUBMIT_ONLY === "1";
const LARGE = process.env.BENCH_BATCH_LARGE !== "0";
const LARGE_BYTES = 200 * 1024 * 1024 - 64 * 1024;

export async function runBatchBenchmark(): Promise<void> {
  const stack = await startChatStack("batch", SUBMIT_ONLY ? { GATEWAY_BATCH_CONCURRENCY: "0" } : {});
  const { gateway, key } = stack;
  try {
    const pid = gateway.child.pid!;
    const idleRss = peakRssMiB(pid);

    const items = Array.from({ length: ITEMS }, (_, i) => ({
      custom_id: `item-${i}`,
      body: { model: "bench/chat", messages: [{ role: "user", content: `Say hello, number ${i}` }], max_tokens: 16 },
    }));
    const small = JSON.stringify({ endpoint: "/v1/chat/completions", model: "bench/chat", requests: items });
    const pgDir = stack.postgresDir;
    const cpuBefore = cpuSeconds(pid, pgDir);
    const submitStarted = performance.now();
    const accepted = await post(gateway.url, key, small);
    const submitMs = performance.now() - submitStarted;
    const submitCpu = cpuSpent(cpuBefore, cpuSeconds(pid, pgDir));
    const submitRss = peakRssMiB(pid);
    const runStarted = performance.now();
    const finished = SUBMIT_ONLY ? undefined : await untilTerminal(gateway.url, key, accepted.id);
    const runSeconds = (performance.now() - runStarted) / 1000;
    const runRss = peakRssMiB(pid);
    const warmMs: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const started = performance.now();
      const again = await post(gateway.url, key, small);
      warmMs.push(performance.now() - started);
      await cancel(gateway.url, key, again.id);
    }

    let largeRow: string | undefined;
    if (LARGE) {
      const large = largeSubmission();
      const before = cpuSeconds(pid, pgDir);
      const largeStarted = performance.now();
      const largeAccepted = await post(gateway.url, key, large);
      const largeMs = performance.now() - largeStarted;
      const largeCpu = cpuSpent(before, cpuSeconds(pid, pgDir));
      // Not run: its items would only repeat the first measurement at a much larger size.
      await cancel(gateway.url, key, largeAccepted.id);
      largeRow =
        `| submit ${(large.length / 2 ** 20).toFixed(1)} MiB (${largeCount(large)} items) | ` +
        `202 after ${(largeMs / 1000).toFixed(2)} s | ${peakRssMiB(pid)} MiB | ${largeCpu} |`;
    }

    const cpu = os.cpus();
    console.log(
      `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
        `Node ${process.version}, ${os.platform()} ${os.release()}`,
    );
    console.log(`Date: ${new Date().toISOString()}\n`);
    console.log("| phase | result | gateway peak RSS | CPU: gateway / PostgreSQL |");
    console.log("|---|---|---|---|");
    console.log(`| idle after start | | ${idleRss} MiB | |`);
    console.log(
      `| submit ${ITEMS} chat items (${(small.length / 2 ** 20).toFixed(1)} MiB) | ` +
        `202 after ${submitMs.toFixed(0)} ms | ${submitRss} MiB | ${submitCpu} |`,
    );
    if (finished)
      console.log(
        `| run them against the zero-latency mock | ${finished.status}, ${finished.completed}/${ITEMS} completed in ` +
          `${runSeconds.toFixed(2)} s = ${Math.round(ITEMS / runSeconds)} items/s | ${runRss} MiB | |`,
      );
    if (warmMs.length > 0)
      console.log(
        `| submit them again ×${warmMs.length} (warm) | 202 after ${warmMs.map((ms) => ms.toFixed(0)).join(", ")} ms ` +
          "| | |",
      );
    if (largeRow) console.log(largeRow);
  } finally {
    await stack.stop();
  }
}

async function post(base: string, key: string, body: string): Promise<{ id: string }> {
  const res = await request(`${base}/api/v1/batches`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode !== 202) throw new Error(`POST /batches answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as { id: string };
}

async function cancel(base: string, key: string, id: string): Promise<void> {
  await request(`${base}/api/v1/batches/${id}/cancel`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
  }).then((r) => r.body.dump());
}

async function untilTerminal(base: string, key: string, id: string): Promise<{ status: string; completed: number }> {
  for (;;) {
    const res = await request(`${base}/api/v1/batches?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    const page = (await res.body.json()) as {
      data: { id: string; status: string; request_counts: { completed: number } }[];
    };
    const batch = page.data.find((b) => b.id === id);
    if (batch && ["completed", "failed", "expired", "cancelled"].includes(batch.status))
      return { status: batch.status, completed: batch.request_counts.completed };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Items of about 20 KiB each until the body is just under the 200 MB limit. */
export function largeSubmission(): string {
  const filler = "lorem ipsum ".repeat(1700);
  const parts: string[] = [];
  let size = 100;
  for (let i = 0; size < LARGE_BYTES - 30_000; i++) {
    const item = JSON.stringify({
      custom_id: `large-${i}`,
      body: { model: "bench/chat", messages: [{ role: "user", content: `${i} ${filler}` }], max_tokens: 16 },
    });
    parts.push(item);
    size += item.length + 1;
  }
  return `{"endpoint":"/v1/chat/completions","model":"bench/chat","requests":[${parts.join(",")}]}`;
}

function largeCount(body: string): number {
  return (body.match(/"custom_id"/g) ?? []).length;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on Linux). */
const TICKS_PER_S = 100;

/** CPU seconds (user + system) used so far by the gateway and by PostgreSQL's postmaster and backends. */
function cpuSeconds(gatewayPid: number, pgDataDir: string): { gateway: number; postgres: number } {
  const postmaster = Number(readFileSync(path.join(pgDataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  let postgres = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && (Number(entry) === postmaster || stat.ppid === postmaster)) postgres += stat.cpu;
  }
  return { gateway: procStat(gatewayPid)?.cpu ?? 0, postgres };
}

function procStat(pid: number): { ppid: number; cpu: number } | undefined {
  try {
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)!.split(" ");
    return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S };
  } catch {
    return undefined; // gone meanwhile
  }
}

function cpuSpent(before: { gateway: number; postgres: number }, after: { gateway: number; postgres: number }): string {
  return `${(after.gateway - before.gateway).toFixed(2)} s / ${(after.postgres - before.postgres).toFixed(2)} s`;
}

/** The process's peak resident set so far (VmHWM), in MiB. */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

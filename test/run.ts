import { fork } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parse } from "uvu/parse";
import { startEmbeddedPostgres } from "../server/platform/db/embedded-postgres.js";
import { createLogger } from "../server/platform/logger.js";
import type { FileDone, FileToRun } from "./run-protocol.js";

/**
 * `npm test [pattern]`: one PostgreSQL for the whole run (embedded, or DATABASE_URL), a fresh
 * database per test file (see support/gateway.ts), every `*.test.ts` under test/ through uvu.
 * `*.unit.test.ts` files need neither a gateway nor a database: a run of only those
 * (`npm run test:unit`) starts no PostgreSQL and takes seconds.
 *
 * The exit code is decided here, not by uvu: the run fails when a test failed, when a hook threw
 * (support/suite.ts records those, which uvu would swallow), when a file made a suite that never
 * ran (run-worker.ts) or when no test ran at all.
 * `TEST_ROOT` points the run at another folder (the runner's own test plants suites that way);
 * folders named `fixtures` are never walked.
 */
const UNIT = /\.unit\.test\.ts$/;
const filter = process.argv[2];
// The pattern picks among the test files only: support modules and scripts beside them
// (architecture/route-map.ts) are never run as suites.
const matching = filter ? new RegExp(filter) : undefined;
const root = path.resolve(process.env.TEST_ROOT ?? import.meta.dirname);
const { suites: all } = await parse(root, /\.test\.ts$/, { ignore: /(^|[\\/])fixtures([\\/]|$)/ });
const suites = all.filter((s) => !matching || matching.test(s.name));
const needsDatabase = suites.some((s) => !UNIT.test(s.name));

const log = createLogger(process.env.TEST_LOG_LEVEL ?? "warn");
const dataDir =
  needsDatabase && !process.env.DATABASE_URL ? await fs.mkdtemp(path.join(os.tmpdir(), "gateway-test-")) : undefined;
// The run's PostgreSQL never outlives the run, so it need not survive a machine crash: without
// fsync, creating a database per test file and every commit cost no disk flush.
const UNDURABLE = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };
const postgres = dataDir ? await startEmbeddedPostgres(dataDir, 0, log, UNDURABLE) : undefined;
if (needsDatabase) process.env.TEST_DATABASE_URL = process.env.DATABASE_URL ?? postgres!.url;
delete process.env.DATABASE_URL;
// An interrupted run (Ctrl-C, the SIGTERM of a CI timeout) still stops its PostgreSQL and removes
// its data; the workers end when they lose their runner (run-worker.ts).
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void interrupted(signal));
async function interrupted(signal: "SIGINT" | "SIGTERM"): Promise<void> {
  await postgres?.stop().catch(() => undefined);
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  process.exit(signal === "SIGINT" ? 130 : 143);
}

// Test files run in worker processes (run-worker.ts), TEST_JOBS at a time (default: one per core):
// much of a file's time is spent waiting on the gateways, databases and browsers it starts, which
// another file's work fills (docs/testing.md has the figures). Each file gets a fresh database, whichever worker
// runs it. Files that need a database go first and the quick unit files fill the end, so that no
// worker starts a long file when the others are nearly done.
const jobs = Math.max(1, Math.min(Number(process.env.TEST_JOBS) || os.availableParallelism(), suites.length));
const queue = [...suites.filter((s) => !UNIT.test(s.name)), ...suites.filter((s) => UNIT.test(s.name))];
const results: FileDone[] = [];
const started = performance.now();
try {
  await Promise.all(Array.from({ length: jobs }, (_, slot) => runWorker(slot)));
} finally {
  await postgres?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
}
const seconds = (performance.now() - started) / 1000;

/**
 * One worker process fed from the queue until it is empty; a worker that dies fails its file and
 * is replaced. `TEST_WORKER` is its slot, which keeps what must not be shared between files that
 * run at the same time apart (support/gateway.ts).
 */
async function runWorker(slot: number): Promise<void> {
  while (queue.length > 0) {
    const worker = fork(path.join(import.meta.dirname, "run-worker.ts"), {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { ...process.env, TEST_WORKER: String(slot) },
    });
    let current: FileToRun | undefined;
    let ready = false;
    const exited = new Promise<number | null>((resolve) => worker.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      const next = () => {
        const suite = queue.shift();
        if (!suite) {
          current = undefined;
          worker.send("stop");
          return resolve();
        }
        current = { name: suite.name, file: suite.file };
        worker.send(current);
      };
      worker.on("message", (message: FileDone | "ready") => {
        if (message === "ready") ready = true;
        else report(message);
        next();
      });
      void exited.then((code) => {
        if (!ready) throw new Error(`a test worker exited (code ${code}) before it could run a file`);
        if (current)
          report({
            name: current.name,
            seconds: 0,
            total: 1,
            passed: 0,
            skipped: 0,
            output: `${current.name}\n  ✘ the worker process exited (code ${code}) while running this file\n`,
            hookFailures: [],
            unrunSuites: [],
          });
        resolve();
      });
    });
    await exited;
  }
}

function report(done: FileDone): void {
  results.push(done);
  process.stdout.write(`${done.output}\n`);
}

const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
if (slowest.length > 1)
  console.log(
    `Slowest files:\n${slowest.map((f) => `  ${f.seconds.toFixed(1).padStart(6)} s  ${f.name}`).join("\n")}\n`,
  );
const sum = (count: (done: FileDone) => number) => results.reduce((total, done) => total + count(done), 0);
const total = sum((d) => d.total);
const passed = sum((d) => d.passed);
const skipped = sum((d) => d.skipped);
const hookFailures = results.flatMap((d) => d.hookFailures);
const unrunSuites = results.flatMap((d) => d.unrunSuites.map((suite) => `${suite} (${d.name})`));
// uvu's total counts the tests that ran (skipped ones are not in it); a hook that threw counts as
// one failure besides the tests it stopped, and so does a suite made but never run.
const failed = total - passed + hookFailures.length + unrunSuites.length;
if (hookFailures.length > 0)
  console.log(`Hooks that threw:\n${hookFailures.map((f) => `  ${f.suite} (${f.hook}): ${f.message}`).join("\n")}\n`);
if (unrunSuites.length > 0) console.log(`Suites made but never run:\n${unrunSuites.map((s) => `  ${s}`).join("\n")}\n`);
if (total === 0) console.log("No test ran.");
console.log(`${results.length} files in ${seconds.toFixed(1)} s with ${jobs} worker${jobs === 1 ? "" : "s"}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(total === 0 || failed > 0 ? 1 : 0);

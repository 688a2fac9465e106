import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parse } from "uvu/parse";
import { run } from "uvu/run";
import { startEmbeddedPostgres } from "../server/db/embedded-postgres.js";
import { createLogger } from "../server/logger.js";

/**
 * `npm test [pattern]`: one PostgreSQL for the whole run (embedded, or DATABASE_URL), a fresh
 * database per test file (see support/gateway.ts), every `*.test.ts` under test/ through uvu.
 * `*.unit.test.ts` files need neither a gateway nor a database: a run of only those
 * (`npm run test:unit`) starts no PostgreSQL and takes seconds.
 *
 * The exit code is decided here, not by uvu: the run fails when a test failed, when a hook threw
 * (support/suite.ts records those, which uvu would swallow) or when no test ran at all.
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
const dataDir = needsDatabase && !process.env.DATABASE_URL ? await fs.mkdtemp(path.join(os.tmpdir(), "gateway-test-")) : undefined;
const postgres = dataDir ? await startEmbeddedPostgres(dataDir, 0, log) : undefined;
if (needsDatabase) process.env.TEST_DATABASE_URL = process.env.DATABASE_URL ?? postgres!.url;
delete process.env.DATABASE_URL;

// uvu prints totals only; keep them to print the plain "N passed, N failed" line CI reads. It
// writes a file's name alone when it starts the file, which times each file: the slowest are
// listed at the end, to keep the suite within CI's budget.
const ANSI = /\u001b\[[0-9;]*m/g;
const names = new Set(suites.map((s) => s.name));
const started: { name: string; at: number }[] = [];
let output = "";
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
  const name = text.replace(ANSI, "").trim();
  if (names.has(name)) started.push({ name, at: performance.now() });
  output += text;
  return write(chunk, ...rest);
}) as typeof process.stdout.write;

let ended = 0;
try {
  await run(suites, { bail: false });
  ended = performance.now();
} finally {
  process.stdout.write = write;
  await postgres?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
}
const slowest = started
  .map(({ name, at }, i) => ({ name, seconds: ((started[i + 1]?.at ?? ended) - at) / 1000 }))
  .sort((a, b) => b.seconds - a.seconds)
  .slice(0, 10);
if (slowest.length > 1) console.log(`Slowest files:\n${slowest.map((f) => `  ${f.seconds.toFixed(1).padStart(6)} s  ${f.name}`).join("\n")}\n`);
const plain = output.replace(ANSI, "");
const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
// Loaded only now: uvu must first be imported by uvu/run, which tells it that a runner drives it.
const { hookFailures } = await import("./support/suite.js");
// uvu's total counts the tests that ran (skipped ones are not in it); a hook that threw counts as
// one failure besides the tests it stopped.
const failed = total - passed + hookFailures.length;
if (hookFailures.length > 0) console.log(`Hooks that threw:\n${hookFailures.map((f) => `  ${f.suite} (${f.hook}): ${f.message}`).join("\n")}\n`);
if (total === 0) console.log("No test ran.");
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(total === 0 || failed > 0 ? 1 : 0);

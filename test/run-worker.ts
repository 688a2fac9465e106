import { pathToFileURL } from "node:url";
import type { FileDone, FileToRun } from "./run-protocol.js";

/**
 * One of `npm test`'s worker processes (forked by test/run.ts): it runs the test files the runner
 * sends, one at a time through uvu, and answers each with its counts, its hook failures and
 * everything it printed, so that the runner prints every file's output in one piece. Once uvu has
 * run the file, every suite the file made must have run (support/suite.ts records them): one that
 * did not is a failure, as is a test uvu counted as not passed without saying why.
 *
 * uvu keeps one queue of suites in a global and runs it with `exec`; emptying the queue before each
 * file makes each `exec` run exactly that file's suites. `UVU_DEFER` must be set before uvu is first
 * imported (it tells uvu that a runner drives it), hence the dynamic imports.
 */
interface UvuGlobals {
  UVU_DEFER: number;
  UVU_INDEX: number;
  UVU_QUEUE: unknown[][];
}
const uvuGlobals = globalThis as unknown as UvuGlobals;
uvuGlobals.UVU_DEFER = 1;
const uvu = await import("uvu");
const { createdSuites, hookFailures } = await import("./support/suite.js");

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes start with ESC.
const ANSI = /\u001b\[[0-9;]*m/g;
/** The head of uvu's report of one failed test: "  FAIL  <suite>  "<test>"". */
const FAIL_REPORT = /^ {2} FAIL {2}/gm;
/**
 * When uvu counts a test as not passed without reporting it, its runner's `finally` swallowed an
 * error, and the rest of the suite did not run; support/suite.ts prevents the ways known.
 */
const NO_REASON =
  "uvu could not report an error and stopped the suite (a hook of a suite made with uvu's own suite() threw, " +
  "or a test threw a value uvu cannot print); make suites with test/support/suite.ts, which reports both";

async function runFile({ name, file }: FileToRun): Promise<FileDone> {
  uvuGlobals.UVU_QUEUE.length = 0;
  uvuGlobals.UVU_INDEX = 0;
  uvuGlobals.UVU_QUEUE.push([name]);
  const hooksBefore = hookFailures.length;
  const suitesBefore = createdSuites.length;
  let output = "";
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    output += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stdout.write;
  const started = performance.now();
  let importError: string | undefined;
  try {
    await import(pathToFileURL(file).href);
    await uvu.exec(false);
  } catch (error) {
    // A file that throws while it loads ran no test; it still fails the run.
    importError = error instanceof Error && error.stack ? error.stack : String(error);
  } finally {
    process.stdout.write = write;
  }
  const seconds = (performance.now() - started) / 1000;
  if (importError !== undefined)
    return {
      name,
      seconds,
      total: 1,
      passed: 0,
      skipped: 0,
      output: `${name}\n  ✘ the file threw while loading\n    ${importError}\n`,
      hookFailures: [],
      unrunSuites: [],
    };
  // uvu ends each exec with its totals; the runner prints one set for the whole run.
  const totalsAt = output.indexOf("\n  Total:");
  const plain = output.replace(ANSI, "");
  const count = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0);
  const total = count("Total");
  const passed = count("Passed");
  let printed = totalsAt >= 0 ? output.slice(0, totalsAt) : output;
  // A suite made but never run has no test to fail, so without this it would pass unseen.
  const unrunSuites = createdSuites
    .slice(suitesBefore)
    .filter((suite) => !suite.ran)
    .map((suite) => suite.name);
  for (const suite of unrunSuites)
    printed +=
      `\n  ✘ ${suite}: the suite was made but never run (call its run() once, ` +
      `after its tests, at the end of the file)\n`;
  const unexplained = total - passed - (plain.match(FAIL_REPORT) ?? []).length;
  if (unexplained > 0)
    printed +=
      `\n  ✘ ${unexplained} test${unexplained === 1 ? "" : "s"} ` +
      `did not pass and uvu gave no reason: ${NO_REASON}\n`;
  return {
    name,
    seconds,
    total,
    passed,
    skipped: count("Skipped"),
    output: printed,
    hookFailures: hookFailures.slice(hooksBefore),
    unrunSuites,
  };
}

process.on("message", (message: FileToRun | "stop") => {
  // Suites may leave handles open (a leaked timer, a socket); the runner's word ends the process.
  if (message === "stop") process.exit(0);
  void runFile(message).then((done) => process.send?.(done));
});
// A runner that is gone (interrupted, killed) will read no answer: the worker must not run on alone.
process.on("disconnect", () => process.exit(1));
process.send?.("ready");

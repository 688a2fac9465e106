import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as assert from "uvu/assert";
import { suite } from "../suite.js";

/**
 * The runner itself (test/run.ts with support/suite.ts): it runs the planted suites of
 * ./fixtures/ as `npm test` would and reads the exit code and output. A runner that let a failure
 * through would let every other suite's failures through too.
 */
const ROOT = path.resolve(import.meta.dirname, "../../..");
const FIXTURES = path.join(import.meta.dirname, "fixtures");

interface Run {
  code: number;
  output: string;
}

function runPlanted(pattern: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "test/run.ts", pattern],
      {
        cwd: ROOT,
        env: { ...process.env, TEST_ROOT: FIXTURES, TEST_JOBS: "2", FORCE_COLOR: "0", TEST_ORDER: "", ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") return reject(error);
        resolve({ code: typeof error?.code === "number" ? error.code : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * An import of uvu's own module that brings in a value (`{ suite }`, `{ test }`, `* as uvu`, a
 * default): `import type` is the only import of "uvu" a test file needs. Its assertions live in
 * "uvu/assert", which this leaves alone.
 */
const UVU_VALUE_IMPORT = /import\s+(?!type\s)[^;]*?\bfrom\s*["']uvu["']/;

const test = suite("test runner");

test("a run whose tests all pass exits 0", async () => {
  const run = await runPlanted("passing");
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /^1 passed, 0 failed, 0 skipped$/m);
});

test("a failing test makes the run exit 1", async () => {
  const run = await runPlanted("failing");
  assert.is(run.code, 1, run.output);
  assert.match(run.output, /^1 passed, 1 failed, 0 skipped$/m);
});

test("a before hook that throws makes the run exit 1, names its suite and shows the error", async () => {
  const run = await runPlanted("^before-throws");
  assert.is(run.code, 1, run.output);
  assert.match(run.output, /planted: before throws: the before hook threw/);
  assert.match(run.output, /Error: planted setup failure\n\s+at /, "the stack is printed");
  assert.match(run.output, /not run: the suite's before hook threw \(planted setup failure\)/);
  assert.match(run.output, /planted after hook ran/, "the suite's after hooks still run to release what setup started");
  assert.match(run.output, /^0 passed, 3 failed, 0 skipped$/m);
});

test("an after hook that throws fails the run, and the suites after it still run", async () => {
  const run = await runPlanted("(after-throws|passing)");
  assert.is(run.code, 1, run.output);
  assert.match(run.output, /planted: after throws: the after hook threw/);
  assert.match(run.output, /Hooks that threw:\n\s+planted: after throws \(after\): planted teardown failure/);
  assert.match(run.output, /^2 passed, 1 failed, 0 skipped$/m);
});

test("an after.each that throws on a failing test does not hide the suite's other tests", async () => {
  const run = await runPlanted("after-each-throws");
  assert.is(run.code, 1, run.output);
  assert.match(run.output, /planted: after\.each throws: the after\.each hook threw/);
  assert.match(run.output, /^1 passed, 3 failed, 0 skipped$/m);
});

test(
  "a suite that bypasses the guard still fails the run when its setup throws, " +
    "and the output says why no reason was printed",
  async () => {
    const run = await runPlanted("bare-uvu");
    assert.is(run.code, 1, run.output);
    assert.match(
      run.output,
      /1 test did not pass and uvu gave no reason: uvu could not report an error and stopped the suite \(a hook of a suite made with uvu's own suite\(\) threw/,
    );
    assert.match(run.output, /^0 passed, 1 failed, 0 skipped$/m);
  },
);

test(
  "a test or before.each that throws what uvu cannot report (not an Error, " +
    "a ConnectError) is reported, and the suite's later tests still run",
  async () => {
    const run = await runPlanted("throws-non-error");
    assert.is(run.code, 1, run.output);
    assert.match(
      run.output,
      /FAIL\s+planted: a test throws a string\s+"throws"\n\s+the test threw "planted string", not an Error/,
    );
    assert.match(
      run.output,
      /FAIL\s+planted: a test throws a string\s+"throws a ConnectError"\n\s+ConnectError: \[unavailable\] planted connect failure/,
    );
    assert.match(
      run.output,
      /FAIL\s+planted: a before\.each rejects with nothing\s+"first"\n\s+the before\.each hook threw undefined, not an Error/,
    );
    assert.not.match(run.output, /uvu gave no reason/);
    assert.match(run.output, /^1 passed, 3 failed, 0 skipped$/m);
  },
);

test("a file that makes a suite and never runs it fails the run, even beside passing files", async () => {
  const run = await runPlanted("(never-run|passing)");
  assert.is(run.code, 1, run.output);
  assert.match(run.output, /planted: run\(\) forgotten: the suite was made but never run/);
  assert.match(run.output, /planted: run\(\) that never comes: the suite was made but never run/);
  assert.match(
    run.output,
    /Suites made but never run:\n\s+planted: run\(\) forgotten \(never-run\.unit\.test\.ts\)\n\s+planted: run\(\) that never comes \(never-run\.unit\.test\.ts\)/,
  );
  assert.match(run.output, /^2 passed, 2 failed, 0 skipped$/m);
});

test("a pattern that matches no test file fails the run", async () => {
  const run = await runPlanted("matches-nothing");
  assert.is(run.code, 1, run.output);
  assert.match(run.output, /No test ran\./);
});

test("a file that ends its worker process fails the run, and a new worker runs the other files", async () => {
  const run = await runPlanted("(worker-exits|passing|failing)");
  assert.is(run.code, 1, run.output);
  assert.match(
    run.output,
    /worker-exits\.unit\.test\.ts\n\s+✘ the worker process exited \(code 7\) while running this file/,
  );
  assert.match(run.output, /^2 passed, 2 failed, 0 skipped$/m);
});

test("files run in parallel workers, each file's output in one piece", async () => {
  const run = await runPlanted("(passing|failing|after-throws)");
  assert.match(run.output, /with 2 workers/);
  for (const name of ["passing", "failing", "after-throws"])
    assert.match(run.output, new RegExp(`${name}\\.unit\\.test\\.ts\\n\\s+planted: `), name);
});

test(
  "TEST_ORDER=reverse runs each suite's tests last to first, " +
    "so a test that needs an earlier one's leftovers fails",
  async () => {
    const written = await runPlanted("order-dependent");
    assert.is(written.code, 0, written.output);
    const reversed = await runPlanted("order-dependent", { TEST_ORDER: "reverse" });
    assert.is(reversed.code, 1, reversed.output);
    assert.match(
      reversed.output,
      /FAIL\s+planted: order dependent\s+"uses what the first made"\n\s+nothing was made before this test/,
    );
    assert.match(reversed.output, /^1 passed, 1 failed, 0 skipped$/m);
  },
);

test("temporary directories the helpers made are gone once the run is over, even those nobody removed", async () => {
  const run = await runPlanted("temp-dirs");
  assert.is(run.code, 0, run.output);
  const dirs = /planted temporary directories: (\S+) (\S+)/.exec(run.output)?.slice(1) ?? [];
  assert.is(dirs.length, 2, run.output);
  for (const dir of dirs) assert.not.ok(fs.existsSync(dir), `${dir} is left behind`);
});

test("every test file makes its suites through support/suite.ts: nothing but types is imported from uvu itself", () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "fixtures") walk(full);
      } else if (entry.name.endsWith(".ts") && full !== path.join(ROOT, "test/support/suite.ts")) {
        if (UVU_VALUE_IMPORT.test(fs.readFileSync(full, "utf8"))) offenders.push(path.relative(ROOT, full));
      }
    }
  };
  walk(path.join(ROOT, "test"));
  assert.equal(offenders, []);
});

test.run();

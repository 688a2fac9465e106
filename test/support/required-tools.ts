import type { Test } from "uvu";
import * as assert from "uvu/assert";

/**
 * For suites that need a program from the system (Debian's protoc, chromium, …), which .ci/run
 * installs: when something is missing, register in place of the suite's tests one test that, under
 * CI=true, fails naming what is missing, and elsewhere is skipped with a visible message. Returns
 * whether anything is missing, i.e. whether the caller must not register its own tests.
 */
export function missingTools<T>(test: Test<T>, what: { suite: string; missing: string[]; install: string }): boolean {
  if (what.missing.length === 0) return false;
  const message = `missing ${what.missing.join(", ")}; install with: ${what.install}`;
  if (process.env.CI === "true") {
    test(`${what.suite}: the tools are installed (.ci/run installs them)`, () => assert.unreachable(message));
  } else {
    console.log(`  ${what.suite} skipped: ${message}`);
    test.skip(what.suite, () => {});
  }
  return true;
}

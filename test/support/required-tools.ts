import type { Test } from "uvu";
import * as assert from "uvu/assert";

/**
 * What some tests need of the machine, which CI provides and a developer's machine may not: a
 * program from the system (Debian's protoc, chromium, …), which .ci/run installs, or being root,
 * which CI is.
 */
interface Requirement {
  /** Names the tests that need it: the stand-in test and the skip message carry it. */
  suite: string;
  /** What CI provides, as the stand-in test says it: "the tools are installed (…)". */
  needs: string;
  /** How this machine falls short and what to do about it; undefined when it does not. */
  lacking: string | undefined;
}

/**
 * When the requirement is not met, registers in place of the tests that need it one test that,
 * under CI=true, fails saying what is lacking, and elsewhere is skipped with a visible message: a
 * test that returns early would pass having checked nothing. Returns whether it is not met, i.e.
 * whether the caller must not register those tests.
 */
function unmet<T>(test: Test<T>, { suite, needs, lacking }: Requirement): boolean {
  if (lacking === undefined) return false;
  if (process.env.CI === "true") {
    test(`${suite}: ${needs}`, () => assert.unreachable(lacking));
  } else {
    console.log(`  ${suite} skipped: ${lacking}`);
    test.skip(suite, () => {});
  }
  return true;
}

/** For tests that need programs from the system, which .ci/run installs when they are missing. */
export function missingTools<T>(test: Test<T>, what: { suite: string; missing: string[]; install: string }): boolean {
  const lacking =
    what.missing.length === 0 ? undefined : `missing ${what.missing.join(", ")}; install with: ${what.install}`;
  return unmet(test, { suite: what.suite, needs: "the tools are installed (.ci/run installs them)", lacking });
}

/** For tests that only root can run (`why` says what only root can do); CI runs as root. */
export function notRoot<T>(test: Test<T>, what: { suite: string; why: string }): boolean {
  const uid = process.getuid?.();
  const lacking = uid === 0 ? undefined : `not root (uid ${uid ?? "unknown"}): ${what.why}; run the tests as root`;
  return unmet(test, { suite: what.suite, needs: "the tests run as root (CI runs as root)", lacking });
}

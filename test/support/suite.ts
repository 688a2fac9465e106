import { suite as uvuSuite, type Callback, type Test } from "uvu";
import { errorMessage } from "../../wire/errors.js";

/**
 * The one way test files make a suite: uvu's `suite` with every hook guarded, every thrown value
 * made an Error, and a record of whether the suite ran.
 *
 * uvu 0.5 runs a suite's hooks inside `try { … } finally { …; return … }`, and the `return` in
 * `finally` discards whatever a `before` (or an `after.each` on a failing test) threw: the suite
 * printed "(0 / N)" in green and the run passed. Here a hook's error is caught where it happens,
 * printed with its suite and stack, and kept in `hookFailures`, which `test/run.ts` reads for the
 * exit code. After a failed `before`, the suite's tests still register and each fails saying why it
 * did not run; its `after` hooks still run, so that whatever the setup started is stopped.
 *
 * uvu reports a failed test by reading `err.name`, `err.stack`, and `err.details` and `err.operator`
 * as strings (its assertions' diff). What breaks those reads made the report throw inside uvu's
 * catch, and the same `finally` swallowed it: no reason printed, and the suite's later tests never
 * ran. A value that is not an Error (`throw "x"`, a promise rejected with nothing) is wrapped in an
 * Error that names it; an Error with other `details` (ConnectError's list of details, which every
 * failed gRPC or Connect call in a test throws) is wrapped in one that keeps its name, message and
 * stack.
 */
export function suite<T = Record<string, unknown>>(name: string, context?: T): Test<T> {
  const inner = uvuSuite<T>(name, context);
  const record: SuiteRecord = { name, ran: false };
  createdSuites.push(record);
  // The first hook of every suite: uvu runs a suite's `before` hooks only when it runs the suite.
  inner.before(() => {
    record.ran = true;
  });
  let setupError: unknown;

  const guardHook =
    (hook: HookName, callback: Callback<T>): Callback<T> =>
    async (state) => {
      if (setupError !== undefined && hook !== "after") return;
      try {
        await callback(state);
      } catch (error) {
        // A throw from before.each fails its test through uvu's own per-test catch, which reports it.
        if (hook === "before.each") throw asError(error, "the before.each hook");
        if (hook === "before") setupError = error;
        recordHookFailure(name, hook, error);
      }
    };
  const guardTest =
    (callback: Callback<T>): Callback<T> =>
    async (state) => {
      if (setupError !== undefined)
        throw new Error(`not run: the suite's before hook threw (${errorMessage(setupError)})`);
      try {
        await callback(state);
      } catch (error) {
        throw asError(error, "the test");
      }
    };

  // TEST_ORDER=reverse registers the suite's tests last to first when it runs, so that a test that
  // leans on what an earlier one left behind fails (docs/testing.md); hooks keep their order.
  const reversed = process.env.TEST_ORDER === "reverse";
  const held: Array<() => void> = [];
  const register = (add: () => void) => (reversed ? held.unshift(add) : add());
  const test = ((title: string, callback: Callback<T>) => register(() => inner(title, guardTest(callback)))) as Test<T>;
  test.only = (title, callback) => register(() => inner.only(title, guardTest(callback)));
  test.skip = (title, callback) => inner.skip(title, callback);
  test.before = Object.assign((callback: Callback<T>) => inner.before(guardHook("before", callback)), {
    each: (callback: Callback<T>) => inner.before.each(guardHook("before.each", callback)),
  });
  test.after = Object.assign((callback: Callback<T>) => inner.after(guardHook("after", callback)), {
    each: (callback: Callback<T>) => inner.after.each(guardHook("after.each", callback)),
  });
  test.run = () => {
    for (const add of held.splice(0)) add();
    inner.run();
  };
  return test;
}

type HookName = "before" | "before.each" | "after" | "after.each";

/** A hook that threw: read by test/run.ts, which fails the run when there is any. */
export interface HookFailure {
  suite: string;
  hook: HookName;
  message: string;
}

/** Every hook failure of this run, in order. */
export const hookFailures: HookFailure[] = [];

/**
 * A suite made in this process, and whether uvu ran it. A suite whose file never calls `run()`
 * (or calls it only after the file's run is over) contributes no test and, unnoticed, no failure:
 * test/run-worker.ts fails the file for each one still not run when its run ends.
 */
export interface SuiteRecord {
  name: string;
  ran: boolean;
}

/** Every suite made in this process, in order. */
export const createdSuites: SuiteRecord[] = [];

function recordHookFailure(suiteName: string, hook: HookName, error: unknown): void {
  hookFailures.push({ suite: suiteName, hook, message: errorMessage(error) });
  const stack = error instanceof Error && error.stack ? error.stack : errorMessage(error);
  process.stdout.write(`\n  ✘ ${suiteName}: the ${hook} hook threw\n    ${stack.split("\n").join("\n    ")}\n`);
}

/** What uvu can report: an Error it can format as it is, anything else wrapped in one it can. */
function asError(thrown: unknown, thrower: string): Error {
  if (!(thrown instanceof Error)) return new Error(`${thrower} threw ${describeThrown(thrown)}, not an Error`);
  const { details, operator } = thrown as { details?: unknown; operator?: unknown };
  const formattable =
    (details === undefined || details === null || details === false || typeof details === "string") &&
    (operator === undefined || typeof operator === "string");
  if (formattable && typeof thrown.name === "string") return thrown;
  const wrapped = new Error(`${String(thrown.name)}: ${thrown.message}`, { cause: thrown });
  wrapped.stack = `${wrapped.message}\n${(thrown.stack ?? "").split("\n").slice(1).join("\n")}`;
  return wrapped;
}

function describeThrown(thrown: unknown): string {
  if (thrown === undefined || thrown === null) return String(thrown);
  if (typeof thrown === "string") return JSON.stringify(thrown);
  if (typeof thrown === "object") {
    try {
      return `the object ${JSON.stringify(thrown).slice(0, 200)}`;
    } catch {
      return "an object";
    }
  }
  return `the ${typeof thrown} ${String(thrown).slice(0, 200)}`;
}

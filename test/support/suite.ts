import { suite as uvuSuite, type Callback, type Test } from "uvu";
import { errorMessage } from "../../wire/errors.js";

/**
 * The one way test files make a suite: uvu's `suite` with every hook guarded.
 *
 * uvu 0.5 runs a suite's hooks inside `try { … } finally { …; return … }`, and the `return` in
 * `finally` discards whatever a `before` (or an `after.each` on a failing test) threw: the suite
 * printed "(0 / N)" in green and the run passed. Here a hook's error is caught where it happens,
 * printed with its suite and stack, and kept in `hookFailures`, which `test/run.ts` reads for the
 * exit code. After a failed `before`, the suite's tests still register and each fails saying why it
 * did not run; its `after` hooks still run, so that whatever the setup started is stopped.
 */
export function suite<T = Record<string, unknown>>(name: string, context?: T): Test<T> {
  const inner = uvuSuite<T>(name, context);
  let setupError: unknown;

  const guardHook =
    (hook: HookName, callback: Callback<T>): Callback<T> =>
    async (state) => {
      if (setupError !== undefined && hook !== "after") return;
      try {
        await callback(state);
      } catch (error) {
        // A throw from before.each fails its test through uvu's own per-test catch, which reports it.
        if (hook === "before.each") throw error;
        if (hook === "before") setupError = error;
        recordHookFailure(name, hook, error);
      }
    };
  const guardTest =
    (callback: Callback<T>): Callback<T> =>
    async (state) => {
      if (setupError !== undefined) throw new Error(`not run: the suite's before hook threw (${errorMessage(setupError)})`);
      await callback(state);
    };

  const test = ((title: string, callback: Callback<T>) => inner(title, guardTest(callback))) as Test<T>;
  test.only = (title, callback) => inner.only(title, guardTest(callback));
  test.skip = (title, callback) => inner.skip(title, callback);
  test.before = Object.assign((callback: Callback<T>) => inner.before(guardHook("before", callback)), {
    each: (callback: Callback<T>) => inner.before.each(guardHook("before.each", callback)),
  });
  test.after = Object.assign((callback: Callback<T>) => inner.after(guardHook("after", callback)), {
    each: (callback: Callback<T>) => inner.after.each(guardHook("after.each", callback)),
  });
  test.run = () => inner.run();
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

function recordHookFailure(suiteName: string, hook: HookName, error: unknown): void {
  hookFailures.push({ suite: suiteName, hook, message: errorMessage(error) });
  const stack = error instanceof Error && error.stack ? error.stack : errorMessage(error);
  process.stdout.write(`\n  ✘ ${suiteName}: the ${hook} hook threw\n    ${stack.split("\n").join("\n    ")}\n`);
}

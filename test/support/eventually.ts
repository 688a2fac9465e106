import { setTimeout as sleep } from "node:timers/promises";
import { inspect } from "node:util";

/**
 * The one way a test waits for state that becomes true behind its back: settlement written by
 * another instance's queue, a cache invalidated over LISTEN/NOTIFY, a host restarted after a crash,
 * a partial upload removed after the client went away. There is no event to await, so the test
 * reads the state until it holds.
 *
 * The guard is not a timing assertion — nothing here measures how fast anything happens. It only
 * keeps a broken suite from hanging, so it is generous: well past the slowest wait of any suite on
 * a loaded 2-core machine (a batch of 2,000 items run to its end, which the batch helper allowed a
 * minute; an intern provisioned with its host process, allowed 600 polls of 50 ms plus each read).
 * Only a failing test ever waits for it.
 */
const GUARD_MS = 60_000;
const POLL_MS = 25;

/** What the default predicate lets through: any value JavaScript treats as true. */
type Truthy<T> = Exclude<T, false | 0 | 0n | "" | null | undefined>;

export interface EventuallyOptions<T> {
  /** When the value read is the one waited for; by default, when it is truthy. */
  until: (value: T) => boolean;
}

/**
 * Reads until `until` holds of the value and returns that value; after the guard, fails with
 * `what` and the last value read. An error thrown by `read` fails at once: it is not a "not yet".
 *   await eventually(() => internView(env, id), "the intern exists")
 *   await eventually(rows, "every call is written", { until: (n) => n === answered })
 */
export function eventually<T>(read: () => T | Promise<T>, what: string): Promise<Truthy<T>>;
export function eventually<T>(read: () => T | Promise<T>, what: string, options: EventuallyOptions<T>): Promise<T>;
export async function eventually<T>(
  read: () => T | Promise<T>,
  what: string,
  options?: EventuallyOptions<T>,
): Promise<T> {
  const until = options?.until ?? ((value: T) => Boolean(value));
  const deadline = Date.now() + GUARD_MS;
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() >= deadline) {
      const last = inspect(value, { depth: 4, breakLength: Infinity, maxArrayLength: 20, maxStringLength: 2_000 });
      throw new Error(`never happened within the ${GUARD_MS} ms guard: ${what}; last value read: ${last}`);
    }
    await sleep(POLL_MS);
  }
}

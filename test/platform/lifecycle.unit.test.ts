import * as assert from "uvu/assert";
import { once, stopInPhases } from "../../server/platform/lifecycle.js";
import { createLogger } from "../../server/platform/logger.js";
import { suite } from "../support/suite.js";

/**
 * The one lifecycle (server/platform/lifecycle.ts): phases in order, parts of a phase together,
 * failures logged and passed.
 */
const test = suite("lifecycle: stopping in phases");

/** A part that records when its stop starts and ends, ending when `release` is called (or at once). */
function part(name: string, events: string[], options: { fail?: boolean; held?: boolean } = {}) {
  let release = () => {};
  const released = options.held ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  return {
    release: () => release(),
    async stop() {
      events.push(`${name} starts`);
      await released;
      events.push(`${name} ends`);
      if (options.fail) throw new Error(`${name} failed`);
    },
  };
}

test("a phase starts when the one before has ended; the parts of a phase stop together", async () => {
  const events: string[] = [];
  const a = part("a", events, { held: true });
  const b = part("b", events);
  const c = part("c", events);
  const done = stopInPhases(
    [
      { name: "first", parts: [a, b] },
      { name: "second", parts: [c] },
    ],
    createLogger("silent"),
  );
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(events, ["a starts", "b starts", "b ends"], "b stopped beside a; c waits for a");
  a.release();
  await done;
  assert.equal(events, ["a starts", "b starts", "b ends", "a ends", "c starts", "c ends"]);
});

test("a part that fails to stop is logged with its phase, and every later part still stops", async () => {
  const events: string[] = [];
  const lines: string[] = [];
  const log = createLogger("warn", { write: (line: string) => void lines.push(line) });
  await stopInPhases(
    [
      { name: "leases", parts: [part("leases", events, { fail: true }), part("neighbour", events)] },
      { name: "database", parts: [part("database", events)] },
    ],
    log,
  );
  assert.ok(events.includes("neighbour ends") && events.includes("database ends"), events.join(", "));
  assert.is(lines.length, 1, lines.join(""));
  assert.match(lines[0]!, /"phase":"leases"/);
  assert.match(lines[0]!, /leases failed/);
});

test("once: a second stop waits for the first instead of stopping twice", async () => {
  let stops = 0;
  let finish = () => {};
  const stop = once(async () => {
    stops++;
    await new Promise<void>((resolve) => (finish = resolve));
  });
  const first = stop();
  const second = stop();
  finish();
  await Promise.all([first, second]);
  await stop();
  assert.is(stops, 1);
});

test.run();

import { setImmediate as nextTurn } from "node:timers/promises";
import * as assert from "uvu/assert";
import { StartPacer } from "../../facade/start-pacer.js";
import { suite } from "../support/suite.js";

/**
 * The start pacer (facade/start-pacer.ts): new requests start at once until one turn of the event
 * loop has spent its budget on starting them; the rest start in later turns, in arrival order, a
 * budget's worth per turn. The clock is the test's, so nothing here depends on the machine's speed.
 */
const test = suite("facade: the start pacer");

/** A clock the test moves by hand, and starts that each take `costMs` of it. */
function pacedStarts(budgetMs: number, costMs: number) {
  let clock = 0;
  const pacer = new StartPacer(budgetMs, () => clock);
  const started: number[] = [];
  const start = (id: number) =>
    pacer.start(() => {
      started.push(id);
      clock += costMs;
    });
  return { pacer, started, start };
}

test("starts within the turn's budget run at once; later ones wait for the next turn", async () => {
  const { pacer, started, start } = pacedStarts(10, 4);
  for (const id of [1, 2, 3, 4, 5]) start(id);
  // 1 at 0 ms, 2 at 4 ms, 3 at 8 ms: within 10 ms. 4 arrives at 12 ms.
  assert.equal(started, [1, 2, 3]);
  assert.is(pacer.queued, 2);
  await nextTurn();
  await nextTurn();
  assert.equal(started, [1, 2, 3, 4, 5]);
  assert.is(pacer.queued, 0);
});

test("a turn starts at most a budget's worth of the waiting requests, in arrival order", async () => {
  const { pacer, started, start } = pacedStarts(10, 5);
  for (let id = 1; id <= 8; id++) start(id);
  assert.equal(started, [1, 2]);
  await nextTurn();
  // One drain: 3 (0 → 5 ms), 4 (5 → 10 ms), then the budget is spent.
  assert.equal(started, [1, 2, 3, 4]);
  assert.is(pacer.queued, 4);
  for (let turn = 0; turn < 4 && pacer.queued > 0; turn++) await nextTurn();
  assert.equal(started, [1, 2, 3, 4, 5, 6, 7, 8]);
});

test("a request arriving while others wait queues behind them, even in a fresh turn", async () => {
  const { started, start } = pacedStarts(10, 20);
  start(1);
  start(2);
  assert.equal(started, [1]);
  start(3);
  await nextTurn();
  assert.equal(started, [1, 2]);
  // A new turn: 4 would fit its budget, but 3 came first.
  start(4);
  assert.equal(started, [1, 2]);
  for (let turn = 0; turn < 4 && started.length < 4; turn++) await nextTurn();
  assert.equal(started, [1, 2, 3, 4]);
});

test("each turn has a fresh budget", async () => {
  const { pacer, started, start } = pacedStarts(10, 6);
  start(1);
  start(2);
  assert.equal(started, [1, 2]);
  await nextTurn();
  start(3);
  start(4);
  assert.equal(started, [1, 2, 3, 4]);
  assert.is(pacer.queued, 0);
});

test.run();

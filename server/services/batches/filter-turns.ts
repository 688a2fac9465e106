/**
 * Turns on the event loop for filtering batch items, one item per turn. A batch's items are
 * filtered in code that does not wait on anything (content filters are synchronous), so without
 * turns a native batch of 10,000 items, or the dozens of items the runner takes at once, would be
 * filtered in one go while every other call of the process waits. Each waiting item is let go in
 * its own turn of the loop (a `setImmediate` callback queued from the previous one runs only after
 * the loop has polled for I/O), so between two items' filtering the process serves everything
 * else that is due: no more than one item's filtering stands between another tenant's request and
 * its answer. Items are let go in the order they asked, across all batches of the process.
 *
 * @module
 */

const waiting: (() => void)[] = [];
let next = 0;
let scheduled = false;

/** Resolves in a turn of the event loop of its own, after the items that asked before it. */
export function filterTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(release);
    }
  });
}

function release(): void {
  const resolve = waiting[next++]!;
  if (next === waiting.length) {
    waiting.length = 0;
    next = 0;
    scheduled = false;
  } else {
    // Items that keep coming never empty the list: what was let go is dropped now and then.
    if (next >= 1024 && next * 2 >= waiting.length) {
      waiting.splice(0, next);
      next = 0;
    }
    setImmediate(release);
  }
  // The item's filtering runs in this turn, as the microtasks that follow this callback.
  resolve();
}

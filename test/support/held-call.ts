import { setTimeout as sleep } from "node:timers/promises";
import type { MockRule, MockUpstream } from "../upstream/mock-upstream.js";
import { eventually } from "./eventually.js";

/** A call whose provider the test held, and for how long at least. */
export interface HeldCall<T> {
  answer: T;
  /** From the moment the test saw the mock holding the request to the moment it let it answer. */
  heldMs: number;
}

/**
 * Sends one call whose provider answer the test holds back for `forMs`. The interval the test
 * measures (from seeing the request at the mock to releasing it) lies inside any measure of the
 * provider's time the gateway can take, and that inside the client's wait, on a machine of any
 * speed: a test compares these intervals with one another and never with a budget.
 */
export async function heldCall<T>(
  upstream: MockUpstream,
  send: () => Promise<T>,
  options: { forMs: number; rule?: MockRule },
): Promise<HeldCall<T>> {
  let release = (): void => undefined;
  upstream.rule({ ...options.rule, until: new Promise<void>((resolve) => (release = resolve)), times: 1 });
  const before = upstream.requests.length;
  let answered = false;
  const answer = send().finally(() => (answered = true));
  // Awaited below; until then a rejection is not an unhandled one.
  answer.catch(() => undefined);
  let heldMs: number;
  try {
    await eventually(() => {
      if (answered) throw new Error("answered before the provider had the request");
      return upstream.requests.length > before;
    }, "the provider has the request");
    const from = performance.now();
    await sleep(options.forMs);
    heldMs = performance.now() - from;
  } finally {
    release();
  }
  return { answer: await answer, heldMs };
}

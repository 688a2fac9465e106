import { ConnectError } from "@connectrpc/connect";
import * as assert from "uvu/assert";
import type { GrantRequest, GrantResult, LeaseStore, Returned } from "../../server/engine/admission/admission-store.js";
import { type AdmissionTicket, LeaseBook, type LeaseSettings } from "../../server/engine/admission/lease-book.js";
import type { Quantity } from "../../server/engine/admission/quantities.js";
import { createLogger } from "../../server/platform/logger.js";
import { httpErrorOf } from "../../wire/errors.js";
import { suite } from "../support/suite.js";

/**
 * The lease arithmetic of server/engine/admission/lease-book.ts with the central side in memory
 * (the database's is admission-store.ts, tested by the admission suites on PostgreSQL): a call is
 * admitted from a slice when the slice covers its worst case, never on partial headroom, takes all
 * of its quantities or none, and settles its real cost once.
 */
const test = suite("admission: lease arithmetic");

/** The central side: per quantity, its smallest limit less what is granted (exact enough in numbers for these amounts). */
class MemoryStore implements LeaseStore {
  readonly granted = new Map<string, number>();
  grants = 0;
  dropped = false;
  unreachable = false;

  async grant(requests: readonly GrantRequest[]): Promise<GrantResult> {
    if (this.unreachable) throw new Error("connection refused");
    this.grants++;
    const amounts: number[] = [];
    for (const [index, { quantity, need, want }] of requests.entries()) {
      const remaining = Math.min(...quantity.limits.map((l) => Number(l.limit))) - (this.granted.get(quantity.name) ?? 0);
      if (remaining < Number(need)) return { granted: false, index, remaining: String(remaining), label: quantity.limits[0]!.label, retryAfterS: null };
      amounts.push(Math.min(Number(want), remaining));
    }
    requests.forEach(({ quantity }, i) => this.granted.set(quantity.name, (this.granted.get(quantity.name) ?? 0) + amounts[i]!));
    const now = new Date();
    return { granted: true, amounts: amounts.map(String), expiresAt: new Date(now.getTime() + 60_000), dbNow: now };
  }

  async giveBack(returned: readonly Returned[]): Promise<void> {
    for (const { quantity, amount } of returned) this.granted.set(quantity.name, (this.granted.get(quantity.name) ?? 0) - Number(amount));
  }

  async dropAll(): Promise<void> {
    this.dropped = true;
  }
}

const SETTINGS: LeaseSettings = { leaseMs: 60_000, topUpMs: 60_000, horizonMs: 10_000, holdMs: 120_000, idleMs: 60_000 };
const WINDOW = new Date("2026-03-15T00:00:00Z");

function quantity(name: string, kind: Quantity["kind"], limit: string, refusal: Quantity["refusal"]): Quantity {
  return {
    name,
    windowStart: WINDOW,
    windowEnd: null,
    kind,
    scope: kind === "spend" ? "key" : null,
    scopeId: "h1",
    period: null,
    limits: [{ limit, includeByok: false, label: `${name} limit` }],
    refusal,
    keyHash: "h1",
    workspaceId: "w1",
  };
}
const rate = (limit: string) => quantity("rate:h1", "requests", limit, "rate_limit");
const spend = (limit: string) => quantity("key:h1:lifetime", "spend", limit, "budget");

function book(store: LeaseStore): LeaseBook {
  return new LeaseBook(store, SETTINGS, createLogger("silent"), () => true);
}

/** The HTTP status of what `admit` threw, or "admitted". */
async function outcome(leases: LeaseBook, quantities: Quantity[], estimateUsd: string, tickets: AdmissionTicket[] = []): Promise<number | "admitted"> {
  try {
    tickets.push(await leases.admit(quantities, estimateUsd));
    return "admitted";
  } catch (err) {
    if (err instanceof ConnectError) return httpErrorOf(err).status;
    throw err;
  }
}

test("the first call waits for a grant of four calls' worth; the next is admitted from it, and a low slice is topped up before it runs dry", async () => {
  const store = new MemoryStore();
  const leases = book(store);
  assert.is(await outcome(leases, [rate("100")], "0"), "admitted");
  assert.equal([store.grants, store.granted.get("rate:h1")], [1, 4]);
  assert.is(await outcome(leases, [rate("100")], "0"), "admitted");
  assert.is(store.grants, 1, "no round trip while the slice covers the call");
  assert.is(await outcome(leases, [rate("100")], "0"), "admitted");
  assert.is(store.grants, 2, "one left of four: a background top-up");
});

test("near a limit the grants shrink to the exact need: every request up to the limit is admitted, the next refused with 429", async () => {
  const leases = book(new MemoryStore());
  const results = [];
  for (let i = 0; i < 6; i++) results.push(await outcome(leases, [rate("5")], "0"));
  assert.equal(results, ["admitted", "admitted", "admitted", "admitted", "admitted", 429]);
});

test("never on partial headroom: a worst case beyond what is left of a budget is refused with 402", async () => {
  const leases = book(new MemoryStore());
  const tickets: AdmissionTicket[] = [];
  assert.is(await outcome(leases, [spend("1")], "0.6", tickets), "admitted");
  assert.is(await outcome(leases, [spend("1")], "0.6"), 402, "0.4 is left: the call's 0.6 is not covered");
  assert.is(await outcome(leases, [spend("1")], "0.4", tickets), "admitted", "what is left still serves a call it covers");
});

test("settling consumes the real cost and frees the rest of the reservation, once", async () => {
  const leases = book(new MemoryStore());
  const tickets: AdmissionTicket[] = [];
  assert.is(await outcome(leases, [spend("1")], "0.9", tickets), "admitted");
  assert.equal(
    tickets[0]!.settle("0.25").map((c) => [c.quantity, c.amount]),
    [["key:h1:lifetime", "0.25"]],
  );
  assert.equal(tickets[0]!.settle("0.25"), [], "a second settle consumes nothing");
  assert.is(await outcome(leases, [spend("1")], "0.75"), "admitted", "0.75 is left once the real cost is known");
  assert.is(await outcome(leases, [spend("1")], "0.01"), 402);
});

test("a request counter is consumed by one per call", async () => {
  const leases = book(new MemoryStore());
  const tickets: AdmissionTicket[] = [];
  assert.is(await outcome(leases, [rate("10"), spend("5")], "1", tickets), "admitted");
  assert.equal(
    tickets[0]!.settle("0.5").map((c) => [c.quantity, c.amount]),
    [
      ["rate:h1", "1"],
      ["key:h1:lifetime", "0.5"],
    ],
  );
});

test("a call takes all of its quantities or none: a refused budget leaves the rate limit untouched", async () => {
  const store = new MemoryStore();
  const leases = book(store);
  assert.is(await outcome(leases, [rate("1"), spend("0.5")], "1"), 402);
  assert.is(await outcome(leases, [rate("1"), spend("0.5")], "0.4"), "admitted", "the one request of the rate limit was not spent by the refused call");
});

test("without the database, what no lease covers is refused with 503, never admitted", async () => {
  const store = new MemoryStore();
  store.unreachable = true;
  assert.is(await outcome(book(store), [rate("100")], "0"), 503);
});

test("stop drops every lease of the instance", async () => {
  const store = new MemoryStore();
  const leases = book(store);
  await outcome(leases, [rate("100")], "0");
  await leases.stop();
  assert.ok(store.dropped);
});

test.run();

import { ConnectError } from "@connectrpc/connect";
import * as assert from "uvu/assert";
import type {
  GrantRequest,
  GrantResult,
  LeaseStore,
  Returned,
} from "../../../server/engine/admission/admission-store.js";
import type { Consumption } from "../../../server/engine/usage/usage-store.js";
import { type AdmissionTicket, LeaseBook, type LeaseSettings } from "../../../server/engine/admission/lease-book.js";
import type { Quantity } from "../../../server/engine/admission/quantities.js";
import { createLogger } from "../../../server/platform/logger.js";
import { httpErrorOf } from "../../../wire/errors.js";
import { suite } from "../../support/suite.js";

/**
 * The lease arithmetic of server/engine/admission/lease-book.ts with the central side in memory
 * (the database's is admission-store.ts, tested by the admission suites on PostgreSQL): a call is
 * admitted from a slice when the slice covers its worst case, never on partial headroom, takes all
 * of its quantities or none, and settles its real cost once.
 */
const test = suite("admission: lease arithmetic");

/**
 * The central side: per quantity, its smallest limit less what is granted (exact enough in numbers
 * for these amounts); what a granted slice used stays in `granted` (settled and leased together).
 */
class MemoryStore implements LeaseStore {
  readonly granted = new Map<string, number>();
  readonly consumed: Consumption[] = [];
  grants = 0;
  dropped = false;
  unreachable = false;

  async grant(requests: readonly GrantRequest[]): Promise<GrantResult> {
    if (this.unreachable) throw new Error("connection refused");
    this.grants++;
    const amounts: number[] = [];
    const left: number[] = [];
    for (const [index, { quantity, need, want }] of requests.entries()) {
      const remaining =
        Math.min(...quantity.limits.map((l) => Number(l.limit))) - (this.granted.get(quantity.name) ?? 0);
      if (remaining < Number(need))
        return {
          granted: false,
          index,
          remaining: String(remaining),
          label: quantity.limits[0]!.label,
          retryAfterS: 42,
        };
      amounts.push(Math.max(Number(need), Math.min(Number(want), remaining)));
      left.push(remaining - amounts.at(-1)!);
    }
    requests.forEach(({ quantity }, i) =>
      this.granted.set(quantity.name, (this.granted.get(quantity.name) ?? 0) + amounts[i]!),
    );
    const now = new Date();
    return {
      granted: true,
      amounts: amounts.map(String),
      left: left.map(String),
      expiresAt: new Date(now.getTime() + 60_000),
      dbNow: now,
    };
  }

  async consume(consumptions: readonly Consumption[]): Promise<void> {
    this.consumed.push(...consumptions);
  }

  async giveBack(returned: readonly Returned[]): Promise<void> {
    for (const { quantity, amount } of returned)
      this.granted.set(quantity.name, (this.granted.get(quantity.name) ?? 0) - Number(amount));
  }

  async dropAll(): Promise<void> {
    this.dropped = true;
  }
}

const SETTINGS: LeaseSettings = {
  leaseMs: 60_000,
  topUpMs: 60_000,
  horizonMs: 10_000,
  holdMs: 120_000,
  idleMs: 60_000,
};
const WINDOW = new Date("2026-03-15T00:00:00Z");
/** A rate limit's minute, the one that holds now (its reset lies ahead). */
const MINUTE = {
  start: new Date(Math.floor(Date.now() / 60_000) * 60_000),
  end: new Date(Math.floor(Date.now() / 60_000) * 60_000 + 60_000),
};

function quantity(
  name: string,
  kind: Quantity["kind"],
  limit: string,
  refusal: Quantity["refusal"],
  rateLimit: Quantity["rateLimit"] = null,
): Quantity {
  return {
    name,
    windowStart: rateLimit ? MINUTE.start : WINDOW,
    // A rate limit's window ends (its reset); a lifetime budget's never does.
    windowEnd: rateLimit ? MINUTE.end : null,
    kind,
    scope: kind === "spend" ? "key" : null,
    scopeId: "h1",
    period: null,
    limits: [{ limit, includeByok: false, label: `${name} limit` }],
    refusal,
    rateLimit,
    keyHash: "h1",
    workspaceId: "w1",
  };
}
const rate = (limit: string) => quantity("rate:h1", "requests", limit, "rate_limit", "gateway_requests");
const tokens = (limit: string) => quantity("rate:key:h1:tokens", "tokens", limit, "rate_limit", "key_tokens");
const spend = (limit: string) => quantity("key:h1:lifetime", "spend", limit, "budget");

function book(store: LeaseStore): LeaseBook {
  return new LeaseBook(store, SETTINGS, createLogger("silent"), () => true);
}

/** The HTTP status of what `admit` threw, or "admitted". */
async function outcome(
  leases: LeaseBook,
  quantities: Quantity[],
  estimateUsd: string,
  tickets: AdmissionTicket[] = [],
  estimateTokens = 0,
): Promise<number | "admitted"> {
  try {
    tickets.push(await leases.admit(quantities, estimateUsd, estimateTokens));
    return "admitted";
  } catch (err) {
    if (err instanceof ConnectError) return httpErrorOf(err).status;
    throw err;
  }
}

test(
  "the first call waits for a grant of four calls' worth; " +
    "the next is admitted from it, and a low slice is topped up before it runs dry",
  async () => {
    const store = new MemoryStore();
    const leases = book(store);
    assert.is(await outcome(leases, [rate("100")], "0"), "admitted");
    assert.equal([store.grants, store.granted.get("rate:h1")], [1, 4]);
    assert.is(await outcome(leases, [rate("100")], "0"), "admitted");
    assert.is(store.grants, 1, "no round trip while the slice covers the call");
    assert.is(await outcome(leases, [rate("100")], "0"), "admitted");
    assert.is(store.grants, 2, "one left of four: a background top-up");
  },
);

test(
  "near a limit the grants shrink to the exact need: " +
    "every request up to the limit is admitted, the next refused with 429",
  async () => {
    const leases = book(new MemoryStore());
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await outcome(leases, [rate("5")], "0"));
    assert.equal(results, ["admitted", "admitted", "admitted", "admitted", "admitted", 429]);
  },
);

test("never on partial headroom: a worst case beyond what is left of a budget is refused with 402", async () => {
  const leases = book(new MemoryStore());
  const tickets: AdmissionTicket[] = [];
  assert.is(await outcome(leases, [spend("1")], "0.6", tickets), "admitted");
  assert.is(await outcome(leases, [spend("1")], "0.6"), 402, "0.4 is left: the call's 0.6 is not covered");
  assert.is(
    await outcome(leases, [spend("1")], "0.4", tickets),
    "admitted",
    "what is left still serves a call it covers",
  );
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
  assert.is(
    await outcome(leases, [rate("1"), spend("0.5")], "0.4"),
    "admitted",
    "the one request of the rate limit was not spent by the refused call",
  );
});

test(
  "a token counter is reserved the worst case and settled with what the call used: " +
    "a short answer leaves the rest to the next calls",
  async () => {
    const leases = book(new MemoryStore());
    const tickets: AdmissionTicket[] = [];
    for (let i = 0; i < 3; i++) assert.is(await outcome(leases, [tokens("120")], "0", tickets, 40), "admitted");
    assert.is(await outcome(leases, [tokens("120")], "0", [], 40), 429, "three worst cases of 40 hold all 120");
    assert.equal(
      tickets[0]!.settle("0", 10).map((c) => [c.quantity, c.amount]),
      [["rate:key:h1:tokens", "10"]],
    );
    assert.is(
      await outcome(leases, [tokens("120")], "0", tickets, 30),
      "admitted",
      "the 30 the first call did not use serve a call of 30",
    );
    assert.is(await outcome(leases, [tokens("120")], "0", [], 1), 429);
  },
);

test(
  "a worst case beyond the token limit itself is refused at once, " +
    "with 429 that says so and asks not to be retried",
  async () => {
    const store = new MemoryStore();
    const leases = book(store);
    try {
      await leases.admit([rate("100"), tokens("120")], "0", 121);
      assert.unreachable("admitted");
    } catch (err) {
      assert.instance(err, ConnectError);
      const error = err as ConnectError;
      assert.is(httpErrorOf(error).status, 429);
      assert.match(
        error.rawMessage,
        /Request too large: it may use up to 121 tokens .* limit of 120 tokens per minute/,
      );
      assert.is(error.metadata.get("x-should-retry"), "false");
      assert.is(error.metadata.get("retry-after"), null);
    }
    assert.is(store.grants, 0, "no round trip for a call no grant could admit");
  },
);

test("a rate limit's 429 carries Retry-After and the x-ratelimit headers of the limit that refused it", async () => {
  const leases = book(new MemoryStore());
  assert.is(await outcome(leases, [rate("2")], "0"), "admitted");
  assert.is(await outcome(leases, [rate("2")], "0"), "admitted");
  try {
    await leases.admit([rate("2")], "0");
    assert.unreachable("admitted");
  } catch (err) {
    const error = err as ConnectError;
    assert.is(httpErrorOf(error).status, 429);
    assert.is(error.metadata.get("retry-after"), "42");
    assert.is(error.metadata.get("x-ratelimit-limit-requests"), "2");
    assert.is(error.metadata.get("x-ratelimit-remaining-requests"), "0");
    assert.match(String(error.metadata.get("x-ratelimit-reset-requests")), /^(\d+m)?\d+(\.\d+)?s$/);
  }
});

test(
  "an admitted call reads its rate limits as this instance sees them: " +
    "its lease's rest plus what was left centrally",
  async () => {
    const leases = book(new MemoryStore());
    const remaining = [];
    for (let i = 0; i < 2; i++) {
      const ticket = await leases.admit([rate("10"), tokens("1000"), spend("5")], "1", 100);
      remaining.push(ticket.readings().map((r) => [r.kind, r.limit, r.remaining]));
    }
    assert.equal(remaining, [
      [
        ["requests", 10, 9],
        ["tokens", 1000, 900],
      ],
      [
        ["requests", 10, 8],
        ["tokens", 1000, 800],
      ],
    ]);
  },
);

test("a call settled apart (a batch item) writes what it used of its request and token windows at once", async () => {
  const store = new MemoryStore();
  const leases = book(store);
  const tickets: AdmissionTicket[] = [];
  await outcome(leases, [rate("10"), tokens("1000")], "0", tickets, 100);
  leases.settleApart(tickets[0]!, 12);
  await leases.stop();
  assert.equal(
    store.consumed.map((c) => [c.quantity, c.amount]),
    [
      ["rate:h1", "1"],
      ["rate:key:h1:tokens", "12"],
    ],
  );
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

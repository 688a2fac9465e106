import { ConnectError } from "@connectrpc/connect";
import { gatewayError, errorMessage } from "../../../wire/errors.js";
import { rateLimitHeaders, type RateLimitReading } from "../../../wire/rate-limit-headers.js";
import { nanosToUsd, usdToNanos } from "../money/money.js";
import type { Logger } from "../../platform/logger.js";
import type { Consumption } from "../usage/usage-store.js";
import type { AdmissionObserver, GrantTrigger } from "./admission-observer.js";
import type { GrantRequest, GrantResult, LeaseStore, Returned } from "./admission-store.js";
import { limitNameOf, type Quantity } from "./quantities.js";
import { refusedLimit, shortfallError, tooLargeError } from "./refusals.js";

/**
 * This instance's admission leases (docs/architecture.md). A call is admitted locally, without any
 * round trip, when every quantity it draws on has a live lease whose unreserved part covers the
 * call's worst case; the reservation is then taken from all of them at once (never on partial
 * headroom). A lease that runs low is topped up in the background; a call that finds one short
 * waits for a grant (one round trip for all its short quantities). Near a limit the grants shrink
 * to the exact need of each call. A database that cannot be reached refuses what no lease covers
 * (503): never fail open.
 *
 * Units: requests for rate and free-model counters, tokens for token counters, nano-dollars for
 * spend. Local amounts are never more than the central ones: grants round down, costs round up.
 * A token counter is reserved the call's worst case and settled with what the provider reported,
 * so a short answer leaves the rest of its reservation in the lease for the next calls.
 */
export interface LeaseSettings {
  /** How long a grant is usable; renewed while the lease is in use. */
  leaseMs: number;
  /** Background top-up and renewal period. */
  topUpMs: number;
  /** A slice covers this long of the recent demand (at least four calls). */
  horizonMs: number;
  /** How long after its expiry a lease stays counted centrally: the longest a call may run. */
  holdMs: number;
  /** A lease unused this long gives its slice back. */
  idleMs: number;
}

class Lease {
  granted = 0;
  reserved = 0;
  /** performance.now() after which the owner may not admit with it. */
  usableUntil = 0;
  lastUsed = 0;
  lastNeed = 0;
  /** Units reserved in the current and the previous horizon. */
  demand = 0;
  previousDemand = 0;
  demandSince = 0;
  refill: Promise<void> | null = null;
  limitsSignature: string;
  /** What the quantity had left centrally, unleased, at the last grant or refusal; null before the first. */
  left: number | null = null;

  constructor(
    readonly key: string,
    public quantity: Quantity,
  ) {
    this.limitsSignature = signature(quantity);
  }

  available(now: number): number {
    return now < this.usableUntil ? this.granted - this.reserved : 0;
  }

  /** The slice this lease aims to hold: the recent demand over one horizon, at least four calls. */
  target(): number {
    return Math.max(4 * this.lastNeed, this.demand, this.previousDemand);
  }

  toUnits(decimal: string): number {
    return this.quantity.kind === "spend" ? usdToNanos(decimal, "floor") : Math.floor(Number(decimal));
  }

  toDecimal(units: number): string {
    return this.quantity.kind === "spend" ? nanosToUsd(units) : String(units);
  }

  /**
   * This instance's view of a rate limit (the rate-limit headers): what its lease still holds plus
   * what was left centrally at the last grant. Other instances' use since then is not in it, nor
   * their unused slices: an estimate within the lease slack (docs/api/limits.md).
   */
  reading(): RateLimitReading | undefined {
    const { quantity } = this;
    if (quantity.rateLimit === null || quantity.kind === "spend" || quantity.windowEnd === null) return undefined;
    const limit = Number(quantity.limits[0]?.limit ?? 0);
    const remaining = this.left === null ? limit : Math.max(0, this.granted - this.reserved) + this.left;
    return {
      kind: quantity.kind,
      limit,
      remaining: Math.min(limit, remaining),
      resetMs: quantity.windowEnd.getTime() - Date.now(),
    };
  }
}

/** One admitted call's hold on its leases; settled exactly once. */
export class AdmissionTicket {
  private settled = false;

  constructor(
    private readonly book: LeaseBook,
    private readonly parts: ReadonlyArray<{ lease: Lease; units: number }>,
  ) {}

  /** The rate limits the call was admitted under, as the rate-limit headers read them. */
  readings(): RateLimitReading[] {
    return readingsOf(this.parts.map((p) => p.lease));
  }

  /**
   * Ends the call's reservation: each request counter is consumed by one, each token counter by
   * the tokens the call used (prompt and completion), each spend counter by the real cost.
   * Returns what settlement must move from the leases to the counters.
   */
  settle(costUsd: string, tokens = 0): Consumption[] {
    if (this.settled) return [];
    this.settled = true;
    this.book.ticketSettled();
    const costNanos = usdToNanos(costUsd, "ceil");
    const consumptions: Consumption[] = [];
    for (const { lease, units } of this.parts) {
      lease.reserved -= units;
      const { quantity } = lease;
      if (quantity.kind === "requests") {
        lease.granted -= 1;
        consumptions.push({ quantity: quantity.name, windowStart: quantity.windowStart, amount: "1" });
      } else if (quantity.kind === "tokens") {
        // More than was reserved (a provider past the estimate) is counted all the same: the
        // overrun is the slack of a token limit (docs/api/limits.md).
        const used = Math.max(0, Math.ceil(tokens));
        lease.granted = Math.max(0, lease.granted - used);
        if (used > 0)
          consumptions.push({ quantity: quantity.name, windowStart: quantity.windowStart, amount: String(used) });
      } else if (costNanos > 0) {
        lease.granted -= costNanos;
        consumptions.push({ quantity: quantity.name, windowStart: quantity.windowStart, amount: costUsd });
      }
    }
    return consumptions;
  }
}

/** Safety net only: every iteration either waits on a grant in flight or makes one. */
const MAX_ATTEMPTS = 64;

export class LeaseBook {
  private readonly leases = new Map<string, Lease>();
  private open = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Settlements written apart from the settlement writer (settleApart), awaited before the leases go back. */
  private readonly writes = new Set<Promise<void>>();

  constructor(
    /** The central side: the database's (admission-store.ts), for this instance's owner name. */
    private readonly store: LeaseStore,
    private readonly settings: LeaseSettings,
    private readonly log: Logger,
    /** Whether settlement can take `n` more calls (its buffer is bounded). */
    private readonly settlementRoom: (n: number) => boolean,
    private readonly observer?: AdmissionObserver,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.settings.topUpMs);
    this.timer.unref();
  }

  /**
   * Admits a call whose worst case is `estimateUsd` and `estimateTokens` against every quantity, or
   * throws the refusal; a rate limit's 429 carries the rate-limit headers of the call's limits.
   */
  async admit(quantities: readonly Quantity[], estimateUsd: string, estimateTokens = 0): Promise<AdmissionTicket> {
    if (!this.settlementRoom(this.open + 1)) {
      throw gatewayError(503, "Usage settlement is behind (the database is unreachable); retry shortly", {
        retryable: true,
        headers: { "retry-after": "1" },
      });
    }
    const estimateNanos = usdToNanos(estimateUsd, "ceil");
    const leases = quantities.map((q) => this.leaseFor(q));
    const needs = quantities.map((q) =>
      q.kind === "requests" ? 1 : q.kind === "tokens" ? Math.ceil(estimateTokens) : estimateNanos,
    );
    try {
      return await this.reserve(leases, needs);
    } catch (err) {
      if (err instanceof ConnectError && refusedLimit(err) !== undefined) {
        for (const [name, value] of Object.entries(rateLimitHeaders(readingsOf(leases)))) err.metadata.set(name, value);
      }
      throw err;
    }
  }

  /**
   * Settles a call whose ledger row the settlement writer does not write (a batch item): what it
   * used of its request and token windows moves from the leases to the counters at once.
   */
  settleApart(ticket: AdmissionTicket, tokens: number): void {
    const consumptions = ticket.settle("0", tokens);
    if (consumptions.length === 0) return;
    const write: Promise<void> = this.store
      .consume(consumptions)
      // The amounts stay counted in the lease until it lapses: under-use, never overspend.
      .catch((err: unknown) =>
        this.log.warn({ err: errorMessage(err) }, "a batch item's use of its rate limits could not be settled"),
      )
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  private async reserve(leases: readonly Lease[], needs: readonly number[]): Promise<AdmissionTicket> {
    for (let i = 0; i < leases.length; i++) {
      const { quantity } = leases[i]!;
      // A worst case larger than a token limit itself can never be admitted under it.
      if (quantity.kind === "tokens" && needs[i]! > Number(quantity.limits[0]?.limit ?? 0)) {
        this.observer?.refused(quantity.refusal);
        this.observer?.refusedBy(limitNameOf(quantity) ?? "key_tokens");
        throw tooLargeError(quantity, needs[i]!);
      }
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const ticket = this.tryReserve(leases, needs);
      if (ticket) return ticket;
      const now = performance.now();
      const short = leases
        .map((lease, i) => ({ lease, need: needs[i]! }))
        .filter(({ lease, need }) => lease.available(now) < need);
      const pending = short.find(({ lease }) => lease.refill !== null);
      if (pending) {
        await pending.lease.refill;
        continue;
      }
      const granted = await this.grant(short, () => this.tryReserve(leases, needs));
      if (granted) return granted;
    }
    throw gatewayError(503, "Admission is contended; retry shortly", {
      retryable: true,
      headers: { "retry-after": "1" },
    });
  }

  /** Gives every slice back (shutdown, after settlement has stopped). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.writes);
    this.leases.clear();
    await this.store.dropAll();
  }

  /** A ticket was settled: its call no longer counts against the settlement queue's room. */
  ticketSettled(): void {
    this.open--;
  }

  private tryReserve(leases: readonly Lease[], needs: readonly number[]): AdmissionTicket | undefined {
    const now = performance.now();
    for (let i = 0; i < leases.length; i++) if (leases[i]!.available(now) < needs[i]!) return undefined;
    const low: Lease[] = [];
    const parts = leases.map((lease, i) => {
      const units = needs[i]!;
      lease.reserved += units;
      lease.lastUsed = now;
      lease.lastNeed = units;
      this.noteDemand(lease, units, now);
      if (lease.refill === null && lease.available(now) < lease.target() / 2) low.push(lease);
      return { lease, units };
    });
    // Before they run dry: one background round trip for all of this call's low leases.
    if (low.length > 0) this.topUp(low);
    this.open++;
    return new AdmissionTicket(this, parts);
  }

  private leaseFor(quantity: Quantity): Lease {
    const key = `${quantity.name}@${quantity.windowStart.getTime()}`;
    let lease = this.leases.get(key);
    if (!lease) {
      lease = new Lease(key, quantity);
      this.leases.set(key, lease);
      return lease;
    }
    const current = signature(quantity);
    if (current !== lease.limitsSignature) {
      // A limit changed: the slice was granted under the old one, so it goes back and the next
      // grant is checked against the new limits.
      lease.quantity = quantity;
      lease.limitsSignature = current;
      this.giveBack([lease]);
    }
    return lease;
  }

  private noteDemand(lease: Lease, units: number, now: number): void {
    if (now - lease.demandSince >= this.settings.horizonMs) {
      lease.previousDemand = now - lease.demandSince < 2 * this.settings.horizonMs ? lease.demand : 0;
      lease.demand = 0;
      lease.demandSince = now;
    }
    lease.demand += units;
  }

  /**
   * One round trip for `short` (all of one lock group): each gets at least its need or the whole
   * grant is refused. `claim` runs as soon as the amounts are in, before anyone waiting on the
   * same leases, so the caller that paid for the round trip is admitted by it.
   */
  private async grant(
    short: ReadonlyArray<{ lease: Lease; need: number }>,
    claim: () => AdmissionTicket | undefined,
  ): Promise<AdmissionTicket | undefined> {
    let ticket: AdmissionTicket | undefined;
    let failure: unknown;
    const leases = short.map((s) => s.lease);
    const refill = this.request(
      "on_demand",
      // Only the shortfall is needed: what the lease still holds counts (no stranded fragments).
      short.map(({ lease, need }) => {
        const held = Math.max(0, lease.available(performance.now()));
        return { lease, need: need - held, want: Math.max(4 * need, lease.target()) - held, held };
      }),
      (refused) => {
        if (refused) failure = refused;
        else ticket = claim();
      },
    ).catch((err: unknown) => {
      failure = err;
    });
    for (const lease of leases) lease.refill = refill;
    await refill;
    if (failure) throw failure;
    return ticket;
  }

  /** Background: tops the leases up to their target, renewing them; errors only delay. */
  private topUp(leases: readonly Lease[]): void {
    const now = performance.now();
    const refill = this.request(
      "background",
      leases.map((lease) => ({ lease, need: 0, want: Math.max(0, lease.target() - lease.available(now)) })),
      () => undefined,
    ).catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "lease top-up failed"));
    for (const lease of leases) lease.refill = refill;
  }

  /** `held`: what the lease already held toward an on-demand call's need, which a refusal counts as left. */
  private async request(
    trigger: GrantTrigger,
    items: ReadonlyArray<{ lease: Lease; need: number; want: number; held?: number }>,
    done: (refused: Error | undefined) => void,
  ): Promise<void> {
    const sent = performance.now();
    const requests: GrantRequest[] = items.map(({ lease, need, want }) => ({
      quantity: lease.quantity,
      need: lease.toDecimal(need),
      want: lease.toDecimal(want),
    }));
    try {
      let result: GrantResult;
      try {
        result = await this.store.grant(requests);
      } catch (err) {
        this.observer?.leaseGrant(trigger, "failed");
        this.log.warn({ err: errorMessage(err) }, "admission leases could not be granted");
        throw gatewayError(503, "Admission is unavailable: the database cannot be reached; retry shortly", {
          retryable: true,
          headers: { "retry-after": "1" },
        });
      }
      if (!result.granted) {
        const { lease, need, held = 0 } = items[result.index]!;
        this.observer?.leaseGrant(trigger, "refused");
        lease.left = lease.toUnits(result.remaining);
        // A call waits on an on-demand grant: its refusal is that call's.
        if (trigger === "on_demand") {
          this.observer?.refused(lease.quantity.refusal);
          const limit = limitNameOf(lease.quantity);
          if (limit) this.observer?.refusedBy(limit);
        }
        // What the call met: all that was left to it (what its lease held too) against its whole need.
        const remaining = lease.toDecimal(lease.left + held);
        done(
          shortfallError(lease.quantity, {
            remaining,
            need: lease.toDecimal(need + held),
            label: result.label,
            retryAfterS: result.retryAfterS,
          }),
        );
        return;
      }
      // Usable until the database's expiry, measured from before the request was sent.
      const usableUntil = sent + (result.expiresAt.getTime() - result.dbNow.getTime());
      items.forEach(({ lease }, i) => {
        lease.granted += lease.toUnits(result.amounts[i]!);
        lease.usableUntil = Math.max(lease.usableUntil, usableUntil);
        const left = result.left[i];
        if (left !== undefined) lease.left = lease.toUnits(left);
      });
      this.observer?.leaseGrant(trigger, "granted");
      done(undefined);
    } finally {
      for (const { lease } of items) lease.refill = null;
    }
  }

  /** Unused parts of `leases` go back to the database; locally they are gone at once. */
  private giveBack(leases: readonly Lease[]): void {
    const returned: Returned[] = [];
    for (const lease of leases) {
      const unused = lease.granted - lease.reserved;
      if (unused <= 0) continue;
      lease.granted -= unused;
      returned.push({ quantity: lease.quantity, amount: lease.toDecimal(unused) });
    }
    this.store
      .giveBack(returned)
      .catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "unused lease could not be returned"));
  }

  private tick(): void {
    const now = performance.now();
    const wall = Date.now();
    const idle: Lease[] = [];
    const groups = new Map<string, Lease[]>();
    for (const lease of this.leases.values()) {
      const { windowEnd } = lease.quantity;
      const ended = windowEnd !== null && wall >= windowEnd.getTime();
      if (lease.refill !== null) continue;
      if (ended || (now >= lease.usableUntil && lease.reserved === 0)) {
        if (lease.reserved === 0) this.leases.delete(lease.key);
        continue;
      }
      if (now - lease.lastUsed >= this.settings.idleMs) {
        if (lease.reserved === 0) {
          idle.push(lease);
          this.leases.delete(lease.key);
        }
        continue;
      }
      const expiring = lease.usableUntil - now < this.settings.leaseMs / 3;
      if (expiring || lease.available(now) < lease.target() / 2) {
        const group = `${lease.quantity.workspaceId}/${lease.quantity.keyHash ?? ""}`;
        groups.set(group, [...(groups.get(group) ?? []), lease]);
      }
    }
    if (idle.length > 0) this.giveBack(idle);
    for (const leases of groups.values()) this.topUp(leases);
  }
}

/** The rate-limit readings of a call's leases (its rate limits only). */
function readingsOf(leases: readonly Lease[]): RateLimitReading[] {
  const readings: RateLimitReading[] = [];
  for (const lease of leases) {
    const reading = lease.reading();
    if (reading) readings.push(reading);
  }
  return readings;
}

function signature(quantity: Quantity): string {
  return quantity.limits.map((l) => `${l.limit}/${l.includeByok}`).join(",");
}

import { randomUUID } from "node:crypto";
import pg from "pg";

import type { Logger } from "../../platform/logger.js";
import { checkRecord, writeLedgerGroup, type CallRecord, type Consumption, type LedgerRow } from "./usage-store.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * Settlement written behind (docs/architecture.md): answered calls are queued here and written in group
 * commits — a flush every `flushMs` or as soon as `flushRows` are waiting, one at a time, each one
 * statement (ledger rows, spend counters, request counters and the leases they were admitted
 * under), with the server's normal durable commit. The answer does not wait for it.
 *
 * The statement is idempotent: ledger ids are fixed when a call is queued, and counters and
 * leases move only for rows that this statement inserted, so a flush retried after an unknown
 * outcome (connection lost at commit) counts nothing twice. While the database cannot be reached
 * rows stay queued and are retried with backoff; nothing queued is dropped. The queue is bounded:
 * admission asks `hasRoom` and refuses new calls (503) before it would overflow.
 */
export interface SettlementSettings {
  flushMs: number;
  flushRows: number;
  /** Calls queued or in flight at most; admission refuses beyond it. */
  capacity: number;
}

/** Told how long each committed row waited since it was queued (for the metrics); must stay cheap. */
export interface SettlementObserver {
  committed(waitedMs: number): void;
}

const RETRY_MIN_MS = 50;
const RETRY_MAX_MS = 2_000;

export class SettlementWriter {
  private queue: LedgerRow[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MIN_MS;
  private failing = false;
  /** Rows ever queued / ever committed, in queue order: a barrier waits for the committed count. */
  private queuedCount = 0;
  private committedCount = 0;
  private waiters: Array<{ until: number; resolve: () => void }> = [];

  /** A connection of its own: groups are written one at a time, as one prepared statement. */
  private client: pg.Client | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly owner: string,
    private readonly settings: SettlementSettings,
    private readonly log: Logger,
    private readonly observer?: SettlementObserver,
  ) {}

  /** Queues one call's ledger row and what it consumed of its leases. */
  enqueue(record: CallRecord, consumptions: readonly Consumption[] = [], at = new Date()): void {
    checkRecord(record);
    this.queue.push({ id: randomUUID(), record, at, consumptions });
    this.queuedCount++;
    if (this.queue.length >= this.settings.flushRows) this.flushSoon(0);
    else this.flushSoon(this.settings.flushMs);
  }

  /** Whether `inFlight` more calls could still be queued without passing the capacity. */
  hasRoom(inFlight: number): boolean {
    return this.queue.length + inFlight <= this.settings.capacity;
  }

  /**
   * Resolves once everything queued before this call is committed (read-your-writes for GET /key and
   * analytics), or once a flush has failed: the reader then meets the outage itself.
   */
  barrier(): Promise<void> {
    if (this.committedCount >= this.queuedCount) return Promise.resolve();
    const until = this.queuedCount;
    this.flushSoon(0);
    return new Promise((resolve) => this.waiters.push({ until, resolve }));
  }

  /** Flushes until the queue is empty (shutdown); keeps retrying while the database is away. */
  async stop(): Promise<void> {
    while (this.queue.length > 0 || this.flushing) {
      if (this.flushing) await this.flushing;
      else await this.flush();
      if (this.failing) await new Promise((resolve) => setTimeout(resolve, this.retryMs));
    }
    clearTimeout(this.timer);
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async write(group: readonly LedgerRow[]): Promise<void> {
    const client = this.client ?? (await this.connect());
    try {
      await writeLedgerGroup(client, this.owner, group);
    } catch (err) {
      // Whatever failed, the next try starts on a fresh connection (a restarted server, a broken socket).
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      throw err;
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("error", () => {
      if (this.client === client) this.client = undefined;
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private flushSoon(delayMs: number): void {
    if (this.flushing) return;
    if (this.timer && delayMs > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
  }

  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0) return Promise.resolve();
    // Up to four flushes' worth at once: what piled up while the last group committed.
    const group = this.queue.slice(0, 4 * this.settings.flushRows);
    this.flushing = this.write(group)
      .then(
        () => {
          this.queue.splice(0, group.length);
          this.committedCount += group.length;
          if (this.observer) {
            const now = Date.now();
            for (const row of group) this.observer.committed(now - row.at.getTime());
          }
          this.retryMs = RETRY_MIN_MS;
          if (this.failing) this.log.info({ pending: this.queue.length }, "usage settlement resumed");
          this.failing = false;
          const reached = this.waiters.filter((w) => w.until <= this.committedCount);
          this.waiters = this.waiters.filter((w) => w.until > this.committedCount);
          for (const waiter of reached) waiter.resolve();
        },
        (err: unknown) => {
          if (!this.failing)
            this.log.error({ err: errorMessage(err), pending: this.queue.length }, "usage settlement failed; retrying");
          this.failing = true;
          this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
          // Readers waiting on a barrier go on and meet the same outage themselves (503), not a hang.
          for (const waiter of this.waiters) waiter.resolve();
          this.waiters = [];
        },
      )
      .finally(() => {
        this.flushing = null;
        if (this.queue.length > 0)
          this.flushSoon(
            this.failing ? this.retryMs : this.queue.length >= this.settings.flushRows ? 0 : this.settings.flushMs,
          );
      });
    return this.flushing;
  }
}

import type { Sequelize, Transaction } from "sequelize";
import {
  closeBatch,
  insertItems,
  insertOpenBatch,
  type BatchClosing,
  type BatchOpening,
  type BatchRow,
} from "./batch-store.js";
import type { ProviderSlots } from "./provider-slots.js";

/** Items per INSERT statement, and the body bytes at which a chunk is written before it is full. */
const CHUNK_ITEMS = 2_000;
const CHUNK_BYTES = 4 * 1024 * 1024;
/** The slot key of submissions holding an open transaction. */
const OPEN = "open submissions";

/**
 * Writes a batch and its items in one transaction while the items still arrive, so a submission is
 * stored in chunks instead of being held whole; nobody sees any of it before the commit. The
 * transaction opens with the first full chunk (the batch row goes in first, with its totals still
 * open) or, for a batch that fits in one chunk, only at the end. The statement for one chunk runs
 * while the next is read. Submissions that open their transaction before the end hold a database
 * connection while their body arrives, so at most `openSlots` of them do at once per instance;
 * the others wait for a slot without reading further.
 */
export class BatchItemWriter {
  private transaction: Transaction | undefined;
  private releaseSlot: (() => void) | undefined;
  private writing: Promise<unknown> = Promise.resolve();
  private customIds: string[] = [];
  private bodies = new JsonArrayBuffer();
  /** The buffer of the statement in flight, written again once that statement is done. */
  private sent = new JsonArrayBuffer();
  private written = 0;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly slots: ProviderSlots,
    private readonly batch: BatchOpening,
  ) {}

  /** Adds an item (its body as JSON text); writes a chunk once one is full. */
  async add(customId: string, body: string): Promise<void> {
    this.customIds.push(customId);
    this.bodies.add(body);
    if (this.customIds.length >= CHUNK_ITEMS || this.bodies.size >= CHUNK_BYTES) {
      if (!this.transaction) {
        this.releaseSlot = await this.slots.acquire(OPEN);
        await this.open();
      }
      await this.flush();
    }
  }

  /** No more items: once the transaction is open, what is left is written while the caller goes on. */
  async itemsEnded(): Promise<void> {
    if (this.transaction) await this.flush();
  }

  /** Writes what is left, sets the batch's totals and commits. */
  async commit(closing: BatchClosing): Promise<BatchRow> {
    if (!this.transaction) await this.open();
    await this.flush();
    await this.writing;
    const row = await closeBatch(this.sequelize, this.batch.id, closing, this.transaction!);
    await this.transaction!.commit();
    this.transaction = undefined;
    this.done();
    return row;
  }

  /**
   * Nothing of the batch is kept. A rollback that fails (the connection is gone) needs no retry:
   * PostgreSQL drops an open transaction with its connection.
   */
  async abandon(): Promise<void> {
    await this.writing.catch(() => undefined);
    await this.transaction?.rollback().catch(() => undefined);
    this.transaction = undefined;
    this.done();
  }

  private async open(): Promise<void> {
    this.transaction = await this.sequelize.transaction();
    await insertOpenBatch(this.sequelize, this.batch, this.transaction);
  }

  /** Starts the INSERT of the items gathered so far, after the one before it. */
  private async flush(): Promise<void> {
    if (this.customIds.length === 0) return;
    // One statement at a time on the transaction's connection; the caller reads on meanwhile.
    await this.writing;
    const customIds = this.customIds;
    const bodies = this.bodies.bytes();
    const start = this.written;
    this.customIds = [];
    [this.bodies, this.sent] = [this.sent, this.bodies];
    this.bodies.reset();
    this.written += customIds.length;
    this.writing = insertItems(this.sequelize, this.batch.id, start, customIds, bodies, this.transaction!);
    // Its failure is seen by whoever waits for it next; until then it is not unhandled.
    this.writing.catch(() => undefined);
  }

  private done(): void {
    this.releaseSlot?.();
    this.releaseSlot = undefined;
  }
}

/**
 * A JSON array of JSON texts, written as UTF-8 straight into one buffer that grows as needed and
 * is used again for a later chunk once the statement that sent it is done.
 */
class JsonArrayBuffer {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 1;

  constructor() {
    this.buffer[0] = 0x5b; // [
  }

  reset(): void {
    this.length = 1;
  }

  get size(): number {
    return this.length;
  }

  add(json: string): void {
    // Room for the separator, the text at its largest in UTF-8, and the closing bracket.
    const room = this.length + 2 + json.length * 3;
    if (room > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(room, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    if (this.length > 1) this.buffer[this.length++] = 0x2c; // ,
    this.length += this.buffer.write(json, this.length, "utf8");
  }

  bytes(): Buffer {
    this.buffer[this.length++] = 0x5d; // ]
    return this.buffer.subarray(0, this.length);
  }
}

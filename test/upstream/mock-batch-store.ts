import type { Json, Provider } from "./mock-wire.js";

/**
 * The providers' native batch APIs in the mock upstream (Anthropic message batches, OpenAI file
 * batches), in memory. Items are answered by the same reply logic as live calls (without live
 * rules, which steer single calls), so a batch result equals what a live call would have given.
 *
 * Time plays no part: a batch moves on when it is polled (GET of the batch), so tests never wait.
 * By default the first poll after submission finds it ended. Tests steer batches with
 * `mock.batches.fault({...})`, which applies to batches created afterwards (and to submissions and
 * deletions from then on) until the next `fault()` or `mock.reset()`.
 */
export interface MockBatchFaults {
  /** Polls answered "in progress" before a batch ends (default 0). Infinity: until it is cancelled. */
  inProgressPolls?: number;
  /** Batch creation answers this error status (with Retry-After), the next `times` creations (default: all). */
  submitError?: { status: number; retryAfter?: number; times?: number };
  /**
   * How batches end. "failed": OpenAI reports status failed with `errors`; Anthropic has no failed
   * batches, so there every item errors instead. "expired": items after the first `finishedItems`
   * (default 0) expire.
   */
  outcome?: "completed" | "failed" | "expired";
  finishedItems?: number;
  /** Items that end with an error result: listed custom ids, or a request body containing `bodyContains`. */
  failItems?: { customIds?: string[]; bodyContains?: string; status?: number; message?: string };
  /**
   * Deleting (an Anthropic batch, an OpenAI file) answers this error status, the next `times`
   * deletions (default: all).
   */
  deleteError?: { status: number; times?: number };
}

export interface MockBatches {
  /** Replaces the fault switches (`fault({})` clears them). */
  fault(faults: MockBatchFaults): void;
  /** Batches created since the last reset. */
  readonly created: number;
  /** Batches deleted: an Anthropic DELETE, or an OpenAI batch whose files are all deleted. */
  readonly deleted: number;
  /** OpenAI files stored (inputs and results) and not deleted. */
  files(): number;
}

export type ItemOutcome =
  | { kind: "succeeded"; answer: Json }
  | { kind: "errored"; status: number; message: string }
  | { kind: "canceled" }
  | { kind: "expired" };

export interface MockBatchItem {
  customId: string;
  /** The request in the provider's format (Anthropic `params`, OpenAI line `body`). */
  body: Json;
  outcome?: ItemOutcome;
}

export interface MockBatch {
  provider: Provider;
  id: string;
  createdAt: Date;
  items: MockBatchItem[];
  /** The faults in force when it was created: its fate is fixed from the start. */
  faults: MockBatchFaults;
  polls: number;
  phase: "in_progress" | "canceling" | "ended";
  endedAs?: "completed" | "failed" | "expired" | "cancelled";
  endedAt?: Date;
  cancelledAt?: Date;
  /** Why an OpenAI batch fails: its input file did not validate. */
  validationErrors: string[];
  files: { input?: string; output?: string; error?: string };
  deleted: boolean;
}

export interface MockFile {
  id: string;
  purpose: string;
  filename: string;
  content: string;
  createdAt: Date;
  /** The batch whose results it holds, or whose input it is. */
  batchId?: string;
}

/** Answers a request in the provider's format, as a live non-streamed call would. */
export type MockReply = (provider: Provider, body: Json) => Json;

export class MockBatchStore implements MockBatches {
  created = 0;
  deleted = 0;
  readonly batches = new Map<string, MockBatch>();
  readonly fileStore = new Map<string, MockFile>();
  private faults: MockBatchFaults = {};
  private sequence = 0;

  constructor(private readonly reply: MockReply) {}

  fault(faults: MockBatchFaults): void {
    // Copies, since `times` counts down.
    this.faults = { ...faults };
    if (faults.submitError) this.faults.submitError = { ...faults.submitError };
    if (faults.deleteError) this.faults.deleteError = { ...faults.deleteError };
  }

  files(): number {
    return this.fileStore.size;
  }

  reset(): void {
    this.created = 0;
    this.deleted = 0;
    this.batches.clear();
    this.fileStore.clear();
    this.faults = {};
    this.sequence = 0;
  }

  nextId(prefix: string): string {
    this.sequence += 1;
    return `${prefix}${this.sequence}`;
  }

  takeSubmitError(): { status: number; retryAfter?: number } | undefined {
    return takeOne(this.faults, "submitError");
  }

  takeDeleteError(): number | undefined {
    return takeOne(this.faults, "deleteError")?.status;
  }

  create(provider: Provider, id: string, items: MockBatchItem[], validationErrors: string[] = []): MockBatch {
    const batch: MockBatch = {
      provider,
      id,
      createdAt: new Date(),
      items,
      faults: { ...this.faults },
      polls: 0,
      phase: "in_progress",
      validationErrors,
      files: {},
      deleted: false,
    };
    this.batches.set(id, batch);
    this.created += 1;
    return batch;
  }

  /** A poll moves the batch on: the one that finds it due ends it. */
  poll(batch: MockBatch): void {
    if (batch.phase === "canceling") return this.finish(batch, "cancelled");
    if (batch.phase !== "in_progress") return;
    if (batch.validationErrors.length > 0) return this.finish(batch, "failed");
    if (batch.polls < (batch.faults.inProgressPolls ?? 0)) {
      batch.polls += 1;
      return;
    }
    this.finish(batch, batch.faults.outcome ?? "completed");
  }

  cancel(batch: MockBatch): void {
    if (batch.phase !== "in_progress") return;
    batch.phase = "canceling";
    batch.cancelledAt = new Date();
  }

  markDeleted(batch: MockBatch): void {
    if (batch.deleted) return;
    batch.deleted = true;
    this.deleted += 1;
  }

  private finish(batch: MockBatch, how: NonNullable<MockBatch["endedAs"]>): void {
    const finished =
      how === "expired" ? (batch.faults.finishedItems ?? 0) : how === "completed" ? batch.items.length : 0;
    batch.items.forEach((item, index) => {
      if (item.outcome) return;
      if (index < finished) item.outcome = this.run(batch, item);
      else if (how === "expired") item.outcome = { kind: "expired" };
      else if (how === "cancelled") item.outcome = { kind: "canceled" };
      else if (batch.provider === "anthropic")
        item.outcome = { kind: "errored", status: 500, message: "mock upstream: the batch failed" };
    });
    batch.phase = "ended";
    batch.endedAs = how;
    batch.endedAt = new Date();
  }

  private run(batch: MockBatch, item: MockBatchItem): ItemOutcome {
    const fail = batch.faults.failItems;
    if (
      fail &&
      (fail.customIds?.includes(item.customId) ||
        (fail.bodyContains !== undefined && JSON.stringify(item.body).includes(fail.bodyContains)))
    ) {
      return {
        kind: "errored",
        status: fail.status ?? 400,
        message: fail.message ?? "mock upstream: this item failed",
      };
    }
    return { kind: "succeeded", answer: this.reply(batch.provider, item.body) };
  }
}

function takeOne<K extends "submitError" | "deleteError">(faults: MockBatchFaults, key: K): MockBatchFaults[K] {
  const fault = faults[key];
  if (!fault) return undefined;
  if (fault.times !== undefined) {
    fault.times -= 1;
    if (fault.times <= 0) delete faults[key];
  }
  return fault;
}

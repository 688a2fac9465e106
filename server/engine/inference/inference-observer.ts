import type { CallRecord } from "../usage/usage-store.js";

/**
 * Told of every upstream attempt of an inference call as the ledger records it (tokens, cost,
 * latencies by provider and model for the metrics). `fellBack`: the attempt failed and the call
 * moved on to the next endpoint. Called on the hot path: must stay cheap and never throw.
 */
export interface InferenceObserver {
  attemptRecorded(record: CallRecord, fellBack: boolean): void;
  /** A guardrail's content filter matched a call's input (`filter`: a built-in slug or `custom`). */
  contentFiltered(filter: string, action: string): void;
}

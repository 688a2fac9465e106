import type { Logger } from "../platform/logger.js";
import { errorMessage } from "../../wire/errors.js";

/**
 * Batch items by state for the `gateway_batch_items` gauge, read at scrape time from the database
 * (so every instance reports the same, cluster-wide numbers; the query is the batch store's,
 * batch-store-counts.ts, handed in by the composition) and kept for a few seconds, so that
 * frequent or concurrent scrapes cost one query between them.
 */
export const BATCH_ITEM_STATES = ["pending", "running", "succeeded", "failed"] as const;
export type BatchItemCounts = Record<(typeof BATCH_ITEM_STATES)[number], number>;

export function batchItemCounts(
  count: () => Promise<BatchItemCounts>,
  log: Logger,
  cacheMs = 5_000,
): () => Promise<BatchItemCounts> {
  let last: BatchItemCounts = { pending: 0, running: 0, succeeded: 0, failed: 0 };
  let readAt = -Infinity;
  let reading: Promise<BatchItemCounts> | undefined;
  const read = async (): Promise<BatchItemCounts> => {
    try {
      last = await count();
      readAt = performance.now();
    } catch (err) {
      // A scrape still answers (with the last numbers) while the database is away; /readyz says why.
      log.warn({ err: errorMessage(err) }, "batch item counts could not be read for the metrics");
    }
    return last;
  };
  return () => {
    if (performance.now() - readAt < cacheMs) return Promise.resolve(last);
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading;
  };
}

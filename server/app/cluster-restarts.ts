/**
 * Replacements in a row that may exit before they listen. Past it the workers cannot start (a
 * setting only a worker reads is broken, the database refuses them) and the primary gives up
 * instead of forking for ever.
 */
export const FAILED_STARTS_ALLOWED = 3;

/**
 * What a cluster's primary does when a worker exits outside a shutdown (cluster-primary.ts): a
 * worker that had listened is replaced; one that exits before the first start is complete fails
 * the start; replacements that keep exiting before they listen end it too.
 */
export class RestartPolicy {
  private failedStarts = 0;

  /** A worker listens: workers can start. */
  listening(): void {
    this.failedStarts = 0;
  }

  exited(worker: { listened: boolean; firstStart: boolean }): "replace" | "give up" {
    if (worker.listened) return "replace";
    if (worker.firstStart) return "give up";
    return ++this.failedStarts >= FAILED_STARTS_ALLOWED ? "give up" : "replace";
  }
}

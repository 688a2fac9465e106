import { errorMessage } from "../../wire/errors.js";
import type { Logger } from "./logger.js";

/**
 * The one lifecycle of the parts an instance starts (the leased workers, the lease book, the
 * settlement writer, the governance feed, the listeners, tracing, …): each has `stop()`, and the
 * composition stops them in ordered phases (server/app/shutdown.ts). Like River's
 * `startstop.Service` and `StopAllParallel`: the parts of one phase stop in parallel, a phase
 * starts when the one before has ended, and a part that fails to stop is logged while the others
 * still stop, so that one failure never leaves the database or the leases held.
 */
export interface Stoppable {
  stop(): Promise<void>;
}

export interface ShutdownPhase {
  /** Named in the log line of a part that failed to stop. */
  name: string;
  parts: readonly Stoppable[];
}

export async function stopInPhases(phases: readonly ShutdownPhase[], log: Logger): Promise<void> {
  for (const phase of phases) {
    const ends = await Promise.allSettled(phase.parts.map((part) => part.stop()));
    for (const end of ends)
      if (end.status === "rejected")
        log.warn({ phase: phase.name, err: errorMessage(end.reason) }, "a part did not stop cleanly; shutdown goes on");
  }
}

/** `stop` made safe to call again: later calls wait for the first one's end instead of stopping twice. */
export function once(stop: () => Promise<void>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => (stopping ??= stop());
}

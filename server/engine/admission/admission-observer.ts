import type { LimitName, Refusal } from "./quantities.js";

/**
 * Whether a lease grant was asked for in the background (a lease running low) or by a call that
 * found its lease short.
 */
export type GrantTrigger = "background" | "on_demand";
/** `refused`: a limit had too little left; `failed`: the database could not be reached. */
export type GrantOutcome = "granted" | "refused" | "failed";

/**
 * Told of admission's decisions (for the metrics): a call refused by a limit (402, 429), and every
 * round trip that tops a lease up. Must stay cheap and never throw.
 */
export interface AdmissionObserver {
  refused(refusal: Refusal): void;
  /** A 429 of admission, by the limit that refused it (besides `refused`). */
  refusedBy(limit: LimitName): void;
  leaseGrant(trigger: GrantTrigger, outcome: GrantOutcome): void;
}

import type { ShutdownPhase, Stoppable } from "../platform/lifecycle.js";

/** What an instance stops, by role; `shutdownPhases` puts them in order. */
export interface InstanceParts {
  /**
   * Ends the intern runs this instance relays and stops taking over interns; `handOver` then marks
   * its interns for another instance.
   */
  internSupervisor: Stoppable & { handOver(): Promise<void> };
  /** The intern host processes this instance started. */
  internHosts: Stoppable;
  /** The interns' shells' egress rules. */
  shellEgress: Stoppable;
  /** The HTTP and gRPC listeners: they stop taking connections and wait for the open calls. */
  listeners: readonly Stoppable[];
  /** The leased workers: the batch runner and the video poller. */
  workers: readonly Stoppable[];
  /** The ledger written behind. */
  settlement: Stoppable;
  /** The response cache's writes still on their way to PostgreSQL. */
  cacheWrites: Stoppable;
  /** The admission leases this instance holds. */
  leases: Stoppable;
  /** The database notification feed (governance changes, key pool health). */
  notifications: Stoppable;
  /** The connection pool, then the embedded PostgreSQL when this instance started one. */
  database: Stoppable;
  embeddedDatabase?: Stoppable;
  tracing: Stoppable;
}

/**
 * The order an instance stops in, after readiness has turned to draining (so load balancers stop
 * sending) and the facade has ended its event streams. Each phase waits for the one before:
 * - the intern supervisor first, so that it takes over nothing the hosts release; the hosts' own
 *   model calls to this instance end with their runs, before the listeners drain;
 * - the hosts, then their shells' rules, then the hand-over of their interns (still `running`:
 *   another instance, or this one restarted, hosts them);
 * - the listeners, which wait for the calls in flight;
 * - the leased workers, whose claims lapse for another instance;
 * - settlement (and the cache's writes), so that every answered call is in the ledger before the
 *   leases go back: what is left of them is unused;
 * - the leases, the notification feed, the database, the embedded database, tracing last so that
 *   every span before it is exported.
 */
export function shutdownPhases(parts: InstanceParts): ShutdownPhase[] {
  return [
    { name: "intern supervisor", parts: [parts.internSupervisor] },
    { name: "intern hosts", parts: [parts.internHosts] },
    { name: "shell egress", parts: [parts.shellEgress] },
    { name: "intern hand-over", parts: [{ stop: () => parts.internSupervisor.handOver() }] },
    { name: "listeners", parts: parts.listeners },
    { name: "leased workers", parts: parts.workers },
    { name: "settlement", parts: [parts.settlement, parts.cacheWrites] },
    { name: "admission leases", parts: [parts.leases] },
    { name: "notification feed", parts: [parts.notifications] },
    { name: "database", parts: [parts.database] },
    { name: "embedded database", parts: parts.embeddedDatabase ? [parts.embeddedDatabase] : [] },
    { name: "tracing", parts: [parts.tracing] },
  ];
}

import { isGoneLocalOwner } from "../core/lease-owner.js";
import type { Deps } from "../deps.js";
import type { InternLifecycle } from "./intern-lifecycle.js";
import { failureMessage, lockLapsedInterns, releaseRuntimeLeases, renewRuntimeLeases, runtimeLeaseOwners } from "./intern-store.js";

/**
 * Keeps interns' runtimes alive across host crashes, restarts and instance failures. Every
 * gateway instance runs one: each round it renews the leases of the interns whose host work it
 * does, then takes over interns whose lease lapsed (their instance died, stopped and handed them
 * over, or released them when their host exited) and lets the lifecycle restart or finish them.
 * The leases of an instance of this machine whose process is gone are released at once.
 * Claims are `FOR UPDATE SKIP LOCKED`, so instances never take the same intern twice.
 */
export interface InternSupervisor {
  /** Stops the rounds (waits for one in progress). */
  stop(): Promise<void>;
  /** Gives up this instance's leases, for once its hosts are stopped: others take over at once. */
  handOver(): Promise<void>;
}

/** Interns taken over per transaction; a round continues while there are more. */
const CLAIM_BATCH = 10;

export function startInternSupervisor(deps: Deps, lifecycle: InternLifecycle): InternSupervisor {
  const { sequelize, log } = deps;
  const { lease } = lifecycle;
  // Three renewals per lease: one slow round does not cost an intern its host.
  const intervalMs = Math.max(100, Math.floor(lease.ms / 3));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  async function takeOver(): Promise<number> {
    return sequelize.transaction(async (transaction) => {
      const lapsed = await lockLapsedInterns(sequelize, CLAIM_BATCH, transaction);
      for (const intern of lapsed) await lifecycle.recoverLocked(intern, transaction);
      return lapsed.length;
    });
  }

  async function round(): Promise<void> {
    await renewRuntimeLeases(sequelize, lease);
    // A crashed instance of this machine (this one before a restart, say) need not be waited for.
    for (const owner of await runtimeLeaseOwners(sequelize)) {
      if (isGoneLocalOwner(owner, lease.owner)) await releaseRuntimeLeases(sequelize, owner);
    }
    while (!stopped && (await takeOver()) === CLAIM_BATCH);
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      current = round()
        .catch((err: unknown) => log.warn({ err: failureMessage(err) }, "intern supervisor round failed"))
        .finally(() => {
          if (!stopped) schedule(intervalMs);
        });
    }, delayMs);
  }

  // At once: interns handed over by a stopped instance (or this one before a restart) come back now.
  schedule(0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
    async handOver() {
      await releaseRuntimeLeases(sequelize, lease.owner);
    },
  };
}

import { startLeasedWorker } from "../../platform/workers/leased-worker.js";
import type { Deps } from "../deps.js";
import type { InternLifecycle } from "./intern-lifecycle.js";
import {
  lockLapsedInterns,
  releaseRuntimeLeases,
  renewRuntimeLeases,
  runtimeLeaseOwners,
  type InternRow,
} from "./intern-store.js";

/**
 * Keeps interns' runtimes alive across host crashes, restarts and instance failures. Every
 * gateway instance runs one: it renews the leases of the interns whose host work it does three
 * times per lease, and each round takes over interns whose lease lapsed (their instance died, stopped and handed them
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

/** Interns taken over per transaction; a round continues while a claim comes back full. */
const CLAIM_BATCH = 10;

export function startInternSupervisor(deps: Deps, lifecycle: InternLifecycle): InternSupervisor {
  const { sequelize, log } = deps;
  const { lease } = lifecycle;
  // Three renewals per lease: one slow round does not cost an intern its host.
  const intervalMs = Math.max(100, Math.floor(lease.ms / 3));

  /** Takes over lapsed interns in the transaction that locks them: the claim is the work. */
  async function takeOver(limit: number): Promise<InternRow[]> {
    return sequelize.transaction(async (transaction) => {
      const lapsed = await lockLapsedInterns(sequelize, limit, transaction);
      for (const intern of lapsed) await lifecycle.recoverLocked(intern, transaction);
      return lapsed;
    });
  }

  // Its first round runs at once: interns handed over by a stopped instance (or this one before a
  // restart) come back now.
  const worker = startLeasedWorker({
    name: "intern supervisor",
    log,
    concurrency: CLAIM_BATCH,
    pollMs: intervalMs,
    claim: takeOver,
    renew: { everyMs: intervalMs, run: () => renewRuntimeLeases(sequelize, lease) },
    // A crashed instance of this machine (this one before a restart, say) need not be waited for.
    releaseDead: {
      self: lease.owner,
      owners: () => runtimeLeaseOwners(sequelize),
      release: (owner) => releaseRuntimeLeases(sequelize, owner),
    },
  });

  return {
    stop: () => worker.stop(),
    async handOver() {
      await releaseRuntimeLeases(sequelize, lease.owner);
    },
  };
}

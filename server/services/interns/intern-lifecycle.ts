/**
 * The transitions of an intern's runtime (provision, suspend, delete), with the host work done by
 * InternHosts (the runtime seam) in the background of this instance:
 *
 *   queued | stopped | failed ─provision─▶ provisioning ─host up─▶ running
 *                                          provisioning ─host failed─▶ failed (last_failure_message)
 *   running | provisioning ─suspend─▶ stopped (host stopped first)
 *   any ─delete─▶ destroying ─host stopped─▶ (gone)   destroying ─stop failed─▶ destroy_failed
 *
 *   provisioning | running ─runtime lost─▶ provisioning (restart)  or  failed (it keeps dying)
 *   destroying ─runtime lost─▶ (gone)
 *
 * A provision past a cap is a 429 (intern-store-caps.ts); any other request is a 409 naming the
 * status. Each provision, suspend and delete starts a new `provision_generation`; a boot writes its
 * progress and outcome only while its generation is current, so the later request wins a race.
 * The intern's own key exists only from provisioning on: every provisioning issues a fresh one,
 * and suspend, a failed boot and delete revoke it.
 * The instance doing an intern's host work holds its runtime lease; a lost runtime (the host
 * exited, or the lease lapsed with its instance) is taken over by intern-supervisor.ts through
 * `recoverLocked`.
 *
 * @module
 */
import { ConnectError } from "@connectrpc/connect";
import type { Transaction } from "sequelize";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { newLeaseOwner } from "../../platform/workers/lease-owner.js";
import type { Deps } from "../deps.js";
import { requireRoomFor } from "./intern-store-caps.js";
import type { InternHostAccess, ProvisionStep } from "./intern-hosts.js";
import { issueInternKey, revokeInternKeys } from "./intern-keys.js";
import type { InternStatusName } from "./intern-record.js";
import { endOpenRuns } from "./intern-store-runs.js";
import { requireNotOwnKey, requireVisibleIntern } from "./intern-scope.js";
import {
  changeIntern,
  deleteIntern,
  failureMessage,
  readInternById,
  releaseRuntimeLeases,
  type InternRow,
  type RuntimeLease,
} from "./intern-store.js";

const PROVISIONABLE: readonly InternStatusName[] = ["queued", "stopped", "failed"];
const SUSPENDABLE: readonly InternStatusName[] = ["running", "provisioning"];
const LIVE: readonly InternStatusName[] = ["provisioning", "running"];
/** A runtime lost more often than this within RECOVERY_WINDOW_MS is not restarted again: the intern fails. */
const MAX_RECOVERIES = 3;
const RECOVERY_WINDOW_MS = 10 * 60_000;

export interface InternLifecycle {
  /** Moves a visible intern (locked in `transaction`) to `provisioning`; the boot starts once `transaction` commits. */
  provisionLocked(intern: InternRow, transaction: Transaction): Promise<InternRow>;
  provision(caller: Caller, internId: string): Promise<InternRow>;
  suspend(caller: Caller, internId: string): Promise<InternRow>;
  destroy(caller: Caller, internId: string): Promise<void>;
  /**
   * Takes over an intern whose runtime was lost (locked in `transaction`, its lease lapsed): a new
   * host for a provisioning or running one, unless it keeps dying (then `failed`); the rest of
   * the teardown for a destroying one. The work starts once `transaction` commits.
   */
  recoverLocked(intern: InternRow, transaction: Transaction): Promise<void>;
  /** The lease this instance takes on the interns whose host work it does. */
  readonly lease: RuntimeLease;
}

export function internLifecycle(deps: Deps): InternLifecycle {
  const { sequelize, internHosts: hosts, log } = deps;
  const lease: RuntimeLease = { owner: newLeaseOwner(), ms: deps.config.internRuntime.leaseMs };
  /** Boots this instance runs, so that suspend and delete can cancel them. */
  const booting = new Map<string, AbortController>();

  function conflict(intern: InternRow, action: string, allowed: readonly InternStatusName[]) {
    return gatewayError(
      409,
      `Intern ${intern.id} is ${intern.status}; only an intern that is ${allowed.join(", ")} can be ${action}`,
    );
  }

  function cancelBoot(internId: string): void {
    booting.get(internId)?.abort();
    booting.delete(internId);
  }

  async function provisionLocked(intern: InternRow, transaction: Transaction): Promise<InternRow> {
    if (!PROVISIONABLE.includes(intern.status)) throw conflict(intern, "provisioned", PROVISIONABLE);
    await requireRoomFor(sequelize, deps.config.internRuntime, intern, lease, transaction);
    const changed = await changeIntern(
      sequelize,
      intern.id,
      {
        status: "provisioning",
        progress: null,
        hostname: null,
        lastFailureMessage: null,
        newGeneration: true,
        lease,
        recoveries: 0,
      },
      { transaction },
    );
    const apiKey = await issueInternKey(changed!, transaction);
    transaction.afterCommit(() => boot(changed!, apiKey));
    return changed!;
  }

  async function recoverLocked(intern: InternRow, transaction: Transaction): Promise<void> {
    if (intern.status === "destroying") {
      const claimed = (await changeIntern(sequelize, intern.id, { newGeneration: true, lease }, { transaction }))!;
      transaction.afterCommit(
        () =>
          void teardown(claimed).catch((err: unknown) =>
            log.error({ intern: intern.id, err: failureMessage(err) }, "intern teardown not settled"),
          ),
      );
      return;
    }
    // Its runs went with the host. Its old key goes too (replaced, or revoked by `fail`), in case
    // the old host still lives somewhere.
    await endOpenRuns(sequelize, intern.id, transaction);
    const recent = intern.recoveredAt !== null && Date.now() - intern.recoveredAt.getTime() < RECOVERY_WINDOW_MS;
    const recoveries = recent ? intern.recoveries + 1 : 1;
    if (recoveries > MAX_RECOVERIES) {
      await fail(
        intern.id,
        `The intern's runtime stopped unexpectedly ${recoveries} times ` +
          `within ${RECOVERY_WINDOW_MS / 60_000} minutes; provision it again`,
        transaction,
      );
      return;
    }
    const changed = (await changeIntern(
      sequelize,
      intern.id,
      {
        status: "provisioning",
        progress: null,
        hostname: null,
        // Kept on the record while it runs again: why it was restarted.
        lastFailureMessage:
          "The intern's runtime stopped unexpectedly (its host process exited or its gateway instance went away); " +
          `restarted at ${new Date().toISOString()}`,
        newGeneration: true,
        lease,
        recoveries,
      },
      { transaction },
    ))!;
    let apiKey: string;
    try {
      apiKey = await issueInternKey(changed, transaction);
    } catch (err) {
      // Its creator left the organization (checked before anything is written): it cannot run again.
      if (!(err instanceof ConnectError)) throw err;
      await fail(changed.id, err.rawMessage, transaction);
      return;
    }
    log.warn({ intern: intern.id, recoveries }, "intern runtime lost; starting a new host");
    transaction.afterCommit(() => boot(changed, apiKey));
  }

  /**
   * Marks the intern failed while `condition` holds, revokes its key and, once committed, stops
   * whatever is left of its host.
   */
  async function fail(
    internId: string,
    message: string,
    transaction: Transaction,
    condition: { from?: readonly InternStatusName[]; generation?: number } = {},
  ): Promise<void> {
    const row = await changeIntern(
      sequelize,
      internId,
      { status: "failed", progress: null, hostname: null, lastFailureMessage: message, newGeneration: true },
      { ...condition, transaction },
    );
    if (!row) return;
    await revokeInternKeys(internId, transaction);
    log.warn({ intern: internId, reason: message }, "intern failed");
    transaction.afterCommit(
      () =>
        void hosts
          .stop(internId)
          .catch((err: unknown) =>
            log.warn({ intern: internId, err: failureMessage(err) }, "failed intern host not stopped"),
          ),
    );
  }

  function boot(intern: InternRow, apiKey: string): void {
    cancelBoot(intern.id);
    const abort = new AbortController();
    booting.set(intern.id, abort);
    const generation = intern.provisionGeneration;
    // Steps are written in the order reported, and all of them before the outcome.
    let steps: Promise<unknown> = Promise.resolve();
    const onStep = (step: ProvisionStep) => {
      steps = steps.then(() =>
        changeIntern(
          sequelize,
          intern.id,
          { progress: { label: step.label, step: step.number, total: step.total } },
          { from: ["provisioning"], generation },
        ).catch((err: unknown) =>
          log.warn({ intern: intern.id, err: failureMessage(err) }, "intern progress not recorded"),
        ),
      );
    };
    void (async () => {
      let access: InternHostAccess | undefined;
      let failure: unknown;
      // Only this boot's host: a newer generation owns whatever runs then.
      const onExit = () =>
        void releaseRuntimeLeases(sequelize, lease.owner, { internId: intern.id, generation }).catch((err: unknown) =>
          log.warn({ intern: intern.id, err: failureMessage(err) }, "lost intern runtime not released"),
        );
      try {
        access = await hosts.start({ intern, apiKey, onStep, onExit }, abort.signal);
      } catch (err) {
        failure = err;
      }
      await steps;
      if (booting.get(intern.id) === abort) booting.delete(intern.id);
      if (abort.signal.aborted) return; // a suspend or delete took over the host
      if (access) await settleStarted(intern.id, generation, access);
      else await settleFailed(intern.id, generation, failure);
    })().catch((err: unknown) => log.error({ intern: intern.id, err: failureMessage(err) }, "intern boot not settled"));
  }

  async function settleStarted(internId: string, generation: number, access: InternHostAccess): Promise<void> {
    const running = await changeIntern(
      sequelize,
      internId,
      { status: "running", progress: null, hostname: hostnameOf(access.origin) },
      { from: ["provisioning"], generation },
    );
    if (running) return;
    // Moved on meanwhile: unless a newer boot owns the host now, it must not keep running.
    const now = await readInternById(sequelize, internId);
    if (!now || !LIVE.includes(now.status)) await hosts.stop(internId);
  }

  async function settleFailed(internId: string, generation: number, failure: unknown): Promise<void> {
    await sequelize.transaction((transaction) =>
      fail(internId, failureMessage(failure), transaction, { from: ["provisioning"], generation }),
    );
  }

  return {
    lease,
    provisionLocked,
    recoverLocked,

    async provision(caller, internId) {
      return sequelize.transaction(async (transaction) => {
        const intern = await requireVisibleIntern(sequelize, caller, internId, { transaction, lock: true });
        requireNotOwnKey(caller, intern);
        return provisionLocked(intern, transaction);
      });
    },

    async suspend(caller, internId) {
      const intern = await requireVisibleIntern(sequelize, caller, internId);
      requireNotOwnKey(caller, intern);
      if (!SUSPENDABLE.includes(intern.status)) throw conflict(intern, "suspended", SUSPENDABLE);
      // A new generation first: a boot still in flight can no longer mark the intern running.
      const claimed = await changeIntern(
        sequelize,
        intern.id,
        { newGeneration: true, lease },
        { from: SUSPENDABLE, generation: intern.provisionGeneration },
      );
      if (!claimed)
        throw gatewayError(409, `Intern ${intern.id} changed while it was being suspended; read it and try again`);
      cancelBoot(intern.id);
      try {
        await hosts.stop(intern.id);
      } catch (err) {
        log.warn({ intern: intern.id, err: failureMessage(err) }, "intern host not stopped");
        throw gatewayError(500, `The runtime of intern ${intern.id} could not be stopped; try again`, {
          reason: "internal_error",
          retryable: true,
        });
      }
      const stopped = await sequelize.transaction(async (transaction) => {
        const row = await changeIntern(
          sequelize,
          intern.id,
          { status: "stopped", progress: null, hostname: null },
          { generation: claimed.provisionGeneration, transaction },
        );
        if (row) {
          await revokeInternKeys(intern.id, transaction);
          await endOpenRuns(sequelize, intern.id, transaction);
        }
        return row;
      });
      // A delete overtook the suspend: report what the intern is now.
      return stopped ?? (await requireVisibleIntern(sequelize, caller, internId));
    },

    async destroy(caller, internId) {
      const claimed = await sequelize.transaction(async (transaction) => {
        const intern = await requireVisibleIntern(sequelize, caller, internId, { transaction, lock: true });
        requireNotOwnKey(caller, intern);
        // Revoked at once: whatever happens to the host, the intern can no longer act.
        await revokeInternKeys(intern.id, transaction);
        return (await changeIntern(
          sequelize,
          intern.id,
          { status: "destroying", progress: null, newGeneration: true, lease },
          { transaction },
        ))!;
      });
      cancelBoot(claimed.id);
      void teardown(claimed).catch((err: unknown) =>
        log.error({ intern: claimed.id, err: failureMessage(err) }, "intern teardown not settled"),
      );
    },
  };

  async function teardown(intern: InternRow): Promise<void> {
    const generation = intern.provisionGeneration;
    try {
      await hosts.destroy(intern.id);
    } catch (err) {
      await changeIntern(
        sequelize,
        intern.id,
        { status: "destroy_failed", lastFailureMessage: failureMessage(err) },
        { from: ["destroying"], generation },
      );
      return;
    }
    // Its vault, secrets and keys go with it (ON DELETE CASCADE).
    await deleteIntern(sequelize, intern.id, generation);
  }
}

/** The record's `hostname`: where the runtime listens (host and port of its origin). */
function hostnameOf(origin: string): string | null {
  try {
    return new URL(origin).host || null;
  } catch {
    return null;
  }
}

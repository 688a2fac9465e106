import { ConnectError } from "@connectrpc/connect";
import { startLeasedWorker } from "../../platform/workers/leased-worker.js";
import { newLeaseOwner } from "../../platform/workers/lease-owner.js";
import { isFreeEndpoint } from "../../engine/index.js";
import { httpErrorOf, errorMessage } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { runItem, type ClaimedItem } from "./batch-item-runner.js";
import { loadPlan, type BatchPlan } from "./batch-plan.js";
import {
  expireOverdue,
  failBatch,
  finishCancelling,
  purgeExpiredResults,
  startValidated,
} from "./batch-store-lifecycle.js";
import { errorResult, itemId } from "./batch-store.js";
import {
  claimItems,
  claimNativeBatches,
  itemLeaseOwners,
  releaseItemLeases,
  renewItemLeases,
  retryItemLater,
} from "./batch-store-queue.js";
import { settleItems, type SettledItem } from "./batch-store-settlement.js";
import { advanceNativeBatch, NATIVE_CONCURRENCY } from "./native-batch-driver.js";
import { createSlots } from "./provider-slots.js";

/**
 * The batch runner of one instance. Work lives in Postgres: items are claimed with
 * `FOR UPDATE SKIP LOCKED` and a lease this instance renews while they run, so any number of
 * instances share one queue and the items of one that stops or crashes are claimed again once
 * their lease lapses. Finished items are recorded in groups (batch-store-settlement.ts), which
 * only apply while the lease is still this instance's: an item is recorded and billed exactly
 * once. A database outage only pauses the runner: claims and flushes are retried, results stay
 * queued.
 */
export interface BatchRunner {
  /** Looks for work now instead of at the next poll (after a submission). */
  wake(): void;
  stop(): Promise<void>;
}

/** How long a batch's route and governance are reused before being planned again. */
const PLAN_TTL_MS = 1_000;
/** Finished items are written at least this often, or as soon as this many are waiting. */
const FLUSH_MS = 20;
const FLUSH_ITEMS = 200;
/** Sweeps (expiry, abandoned cancellations, retention) run at most this often. */
const SWEEP_MS = 1_000;

export function startBatchRunner(deps: Deps): BatchRunner {
  const { sequelize, log } = deps;
  const settings = deps.config.batch;
  const owner = newLeaseOwner();
  const stopping = new AbortController();
  const slots = createSlots(settings.providerConcurrency);
  const plans = new Map<string, { at: number; plan: Promise<BatchPlan> }>();
  let pending: SettledItem[] = [];
  let flushing: Promise<void> | undefined;

  async function sweep(): Promise<void> {
    await startValidated(sequelize);
    await expireOverdue(sequelize);
    await finishCancelling(sequelize);
    await purgeExpiredResults(sequelize);
  }

  async function claim(limit: number): Promise<ClaimedItem[]> {
    const rows = await claimItems(sequelize, owner, limit, settings.leaseSeconds);
    return rows.map((row) => ({
      batchId: row.batch_id,
      idx: row.idx,
      itemId: itemId(row.batch_id, row.idx),
      body: row.body,
      attempt: row.attempts,
    }));
  }

  async function run(item: ClaimedItem): Promise<void> {
    let plan: BatchPlan;
    try {
      plan = await planOf(item.batchId);
    } catch (err) {
      if (!(err instanceof ConnectError)) {
        // The database is unreachable: the item waits, its lease keeps it ours or lapses.
        log.warn(
          { batch: item.batchId, err: errorMessage(err) },
          "batch plan could not be loaded; the item will be retried",
        );
        await retryLater(item, settings.retryBaseMs).catch(() => undefined);
        return;
      }
      // The batch cannot run any more (key disabled, refused by policy, model gone): it fails
      // as a whole with the reason, and its open items with it.
      const { status, message } = httpErrorOf(err);
      await failBatch(sequelize, item.batchId, message, status).catch((failure: unknown) => {
        log.warn(
          { batch: item.batchId, err: errorMessage(failure) },
          "batch could not be marked failed; it will be tried again",
        );
      });
      return;
    }
    try {
      const outcome = await runItem(
        deps,
        plan,
        item,
        { ...settings, timeoutMs: deps.config.requestTimeoutMs, slot: slots.run },
        stopping.signal,
      );
      if (outcome.kind === "retry") await retryLater(item, outcome.delayMs);
      // A rate limit of the gateway's own: the item waits for its window without spending a try.
      else if (outcome.kind === "wait") await retryItemLater(sequelize, owner, item, outcome.delayMs / 1000, false);
      else record(outcome.item);
    } catch (err) {
      if (stopping.signal.aborted) return; // The lease lapses; another run picks the item up.
      if (item.attempt < settings.maxAttempts) {
        log.warn(
          { batch: item.batchId, item: item.idx, err: errorMessage(err) },
          "batch item failed to run; it will be retried",
        );
        await retryLater(item, settings.retryBaseMs).catch(() => undefined);
        return;
      }
      // A failure of our own that repeats (e.g. an answer that cannot be translated): the item's result.
      const { status, message } =
        err instanceof ConnectError
          ? httpErrorOf(err)
          : { status: 500, message: "The gateway could not process this request" };
      record(unrunnable(item, plan, status, message));
    }
  }

  function unrunnable(item: ClaimedItem, plan: BatchPlan, status: number, message: string): SettledItem {
    const attempt = plan.attempts[0]!;
    return {
      batchId: item.batchId,
      idx: item.idx,
      itemId: item.itemId,
      succeeded: false,
      result: errorResult(message, "server_error", "gateway_error"),
      api: plan.format.api,
      modelId: attempt.model.id,
      providerSlug: null,
      endpointId: null,
      httpStatus: status,
      promptTokens: 0,
      completionTokens: 0,
      reasoningTokens: 0,
      cachedTokens: 0,
      cost: "0",
      isByok: false,
      isFree: isFreeEndpoint(attempt.endpoint),
      latencyMs: null,
    };
  }

  function retryLater(item: ClaimedItem, delayMs: number): Promise<void> {
    return retryItemLater(sequelize, owner, item, delayMs / 1000);
  }

  /** The batch's plan: its key's governance and route, reused for a few seconds. */
  function planOf(batchId: string): Promise<BatchPlan> {
    const cached = plans.get(batchId);
    if (cached && Date.now() - cached.at < PLAN_TTL_MS) return cached.plan;
    const plan = loadPlan(deps, batchId);
    plans.set(batchId, { at: Date.now(), plan });
    plan.catch(() => plans.delete(batchId));
    return plan;
  }

  function record(item: SettledItem): void {
    pending.push(item);
    if (pending.length >= FLUSH_ITEMS) void flush();
    else setTimeout(() => void flush(), FLUSH_MS).unref();
  }

  /** One flush at a time; items finished meanwhile go into the next one. */
  function flush(): Promise<void> {
    if (flushing) return flushing;
    if (pending.length === 0) return Promise.resolve();
    const group = pending;
    pending = [];
    flushing = settleItems(sequelize, owner, group)
      .then(() => undefined)
      .catch((err: unknown) => {
        // Kept and written again: the leases are renewed meanwhile, so the items stay ours.
        log.warn({ items: group.length, err: errorMessage(err) }, "batch results could not be recorded yet; retrying");
        pending = group.concat(pending);
        return new Promise<void>((resolve) => setTimeout(resolve, settings.retryBaseMs).unref());
      })
      .finally(() => {
        flushing = undefined;
        if (pending.length > 0) void flush();
      });
    return flushing;
  }

  // Without concurrency the instance runs no batch work at all, native batches included.
  const active = settings.concurrency > 0;
  const items = startLeasedWorker({
    name: "batch runner",
    log,
    concurrency: settings.concurrency,
    pollMs: settings.pollMs,
    claim,
    work: (item) => run(item),
    renew: {
      everyMs: Math.max(200, (settings.leaseSeconds * 1000) / 3),
      run: () => renewItemLeases(sequelize, owner, settings.leaseSeconds),
    },
    // A crashed instance of this machine (this one before a restart, say) need not be waited for.
    releaseDead: {
      self: owner,
      owners: () => itemLeaseOwners(sequelize),
      release: (holder) => releaseItemLeases(sequelize, holder),
    },
    sweep,
    sweepEveryMs: SWEEP_MS,
  });
  /** Batches on providers' own batch APIs: a few HTTP calls per batch, so a worker of their own. */
  const natives = startLeasedWorker({
    name: "native batches",
    log,
    concurrency: NATIVE_CONCURRENCY,
    pollMs: active ? Math.min(settings.nativePollMs, SWEEP_MS) : 0,
    claim: (limit) => claimNativeBatches(sequelize, limit, settings.leaseSeconds),
    work: (batchId, signal) => advanceNativeBatch(deps, settings, batchId, signal),
  });

  return {
    wake: () => items.wake(),
    async stop() {
      stopping.abort();
      await Promise.all([items.stop(), natives.stop()]);
      // What finished is written before the process goes; the rest lapses and is claimed again.
      for (let tries = 0; tries < 3 && (pending.length > 0 || flushing); tries++) await flush();
    },
  };
}

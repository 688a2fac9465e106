/**
 * Batches on a provider's own batch API (native-batch-upstream.ts decides which). The batch row is
 * the queue entry: an instance claims a due batch by pushing `upstream_next_poll_at` forward, then
 * submits it (all its items as one provider batch), or polls it, or collects its results. Items
 * are held by the lease owner `native:<batch id>` for as long as the provider has them, so the
 * item-by-item runner never claims them; whichever instance collects a result settles it through
 * the same fenced statement as local runs, so a result collected twice is billed once.
 *
 * Not exactly-once on the provider side: a crash between the provider accepting the batch and
 * our recording its id submits it again on the next claim (the orphan is never polled or billed).
 *
 * @module
 */
import { ConnectError } from "@connectrpc/connect";
import type { BatchRunnerConfig } from "../../platform/config.js";
import { httpErrorOf, errorMessage } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import type { Attempt } from "../../engine/inference/routing.js";
import { UpstreamError, isRetryable, requiredPart, toGatewayError } from "../../engine/index.js";
import type { ResolvedTarget } from "../../engine/inference/upstream-targets.js";
import type { NativeBatchApi, NativeBatchRequest, NativeBatchState } from "../../engine/providers/native-batch-api.js";
import { filteredItemInTurn } from "./batch-item-filters.js";
import { answered, blockedItem, refused } from "./batch-item-runner.js";
import { CANCELLED_RESULT, closeOpenItems, EXPIRED_RESULT, failBatch } from "./batch-store-lifecycle.js";
import { loadPlan, type BatchPlan } from "./batch-plan.js";
import { errorResult, itemId, type BatchStatusName, type ItemResult } from "./batch-store.js";
import { holdPendingItems, pendingItems, pollNativeBatchIn, recordUpstreamBatch } from "./batch-store-queue.js";
import { settleItems, type SettledItem } from "./batch-store-settlement.js";

/** Native batches advanced at once by one instance. */
export const NATIVE_CONCURRENCY = 8;
/** Collected results are settled in groups of this many. */
const RESULT_GROUP = 200;

const NO_RESULT = errorResult(
  "The provider ended the batch without a result for this request",
  "server_error",
  "provider_error",
);

export function nativeLeaseOwner(batchId: string): string {
  return `native:${batchId}`;
}

/** Moves one claimed batch a step on: submits, polls or collects it. */
export async function advanceNativeBatch(
  deps: Deps,
  settings: BatchRunnerConfig,
  batchId: string,
  signal: AbortSignal,
): Promise<void> {
  await advance(deps, settings, batchId, signal).catch((err: unknown) => {
    // The claim lapses and the batch is tried again; nothing was recorded half-way.
    if (!signal.aborted)
      deps.log.warn({ batch: batchId, err: errorMessage(err) }, "native batch step failed; it will be retried");
  });
}

async function advance(deps: Deps, settings: BatchRunnerConfig, batchId: string, signal: AbortSignal): Promise<void> {
  const { sequelize } = deps;
  let plan: BatchPlan;
  try {
    plan = await loadPlan(deps, batchId);
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    // The key was disabled or the model refused meanwhile: the batch stops like a local one.
    // Its provider batch is left to end on its own; DELETE cancels and removes it.
    const { status, message } = httpErrorOf(err);
    await failBatch(sequelize, batchId, message, status);
    return;
  }
  const { batch } = plan;
  const attempt = plan.attempts.find(
    (a) => a.endpoint.providerSlug === batch.upstream_provider && !a.endpoint.privateEndpointId,
  );
  if (!attempt) {
    await failBatch(
      sequelize,
      batchId,
      `Provider ${batch.upstream_provider} no longer serves ${batch.model} to this batch's key`,
      400,
    );
    return;
  }
  const provider = deps.engine.catalog.providers.get(attempt.endpoint.providerSlug)!;
  const step: NativeStep = {
    deps,
    settings,
    plan,
    attempt,
    api: requiredPart(provider.kind, "nativeBatches"),
    signal,
  };
  const resolved = await deps.engine.resolveTarget(plan.context, attempt.endpoint);
  try {
    if (batch.upstream_batch_id) await poll(step, resolved, batch.upstream_batch_id);
    else await submit(step, resolved);
  } catch (err) {
    if (!(err instanceof UpstreamError) || signal.aborted) throw err;
    if (!isRetryable(err)) {
      const { status, message } = httpErrorOf(toGatewayError(err, attempt.endpoint.providerName));
      await failBatch(sequelize, batchId, message, status);
      return;
    }
    await pollAgainIn(step, Math.max(settings.nativePollMs, (err.options.retryAfterS ?? 0) * 1000));
  }
}

interface NativeStep {
  deps: Deps;
  settings: BatchRunnerConfig;
  plan: BatchPlan;
  attempt: Attempt;
  api: NativeBatchApi;
  signal: AbortSignal;
}

/** All pending items as one provider batch; recorded only if the batch is still running here. */
async function submit(step: NativeStep, { target }: ResolvedTarget): Promise<void> {
  const { deps, plan, api, signal } = step;
  const { sequelize } = deps;
  const { batch } = plan;
  if (batch.status !== "in_progress") return;
  const items = await pendingItems(sequelize, batch.id);
  if (items.length === 0) return;
  const requests: NativeBatchRequest[] = [];
  const blocked: SettledItem[] = [];
  for (const item of items) {
    const ref = { batchId: batch.id, idx: item.idx, itemId: itemId(batch.id, item.idx) };
    // One item per turn of the event loop: a batch of 10,000 items does not hold it for all of them.
    const filtered = await filteredItemInTurn(deps, plan, { ...ref, body: item.body });
    if ("refusal" in filtered) blocked.push(blockedItem(ref, plan.format, step.attempt, filtered.refusal));
    else requests.push({ customId: ref.itemId, body: filtered.request });
  }
  // Items a content filter refused are settled here and never reach the provider.
  await holdPendingItems(
    sequelize,
    batch.id,
    blocked.map((item) => item.idx),
    nativeLeaseOwner(batch.id),
  );
  await settleItems(sequelize, nativeLeaseOwner(batch.id), blocked);
  if (requests.length === 0) return;
  const upstreamId = await api.submit(target, requests, signal);
  const recorded = await recordUpstreamBatch(sequelize, batch.id, upstreamId, {
    owner: nativeLeaseOwner(batch.id),
    pollSeconds: step.settings.nativePollMs / 1000,
  });
  // Cancelled or deleted while the provider took it: that copy must not run on.
  if (!recorded) await api.cancel(target, upstreamId, signal).catch(() => undefined);
}

async function poll(step: NativeStep, resolved: ResolvedTarget, upstreamId: string): Promise<void> {
  const { deps, plan, api, signal } = step;
  const { batch } = plan;
  if (batch.status === "cancelling") {
    // Asked again on every poll until the provider has ended it; a provider that already ended it
    // refuses, which is fine.
    await api.cancel(resolved.target, upstreamId, signal).catch(() => undefined);
  }
  const status = await api.status(resolved.target, upstreamId, signal);
  if (status.state === "in_progress") return pollAgainIn(step, step.settings.nativePollMs);
  if (status.state === "failed") {
    await failBatch(
      deps.sequelize,
      batch.id,
      `Provider ${step.attempt.endpoint.providerName} failed the batch${status.message ? `: ${status.message}` : ""}`,
      502,
    );
    return;
  }
  await collect(step, resolved, upstreamId);
  const [result, terminal] = unfinished(status.state, batch.status);
  await closeOpenItems(deps.sequelize, [batch.id], {
    items: "all",
    result,
    terminal,
    from: ["in_progress", "cancelling"],
  });
}

/** What items without a result become once the provider batch has ended in `state`. */
function unfinished(state: NativeBatchState, ours: BatchStatusName): [ItemResult, BatchStatusName] {
  if (state === "cancelled" || ours === "cancelling") return [CANCELLED_RESULT, "cancelled"];
  if (state === "expired") return [EXPIRED_RESULT, "expired"];
  return [NO_RESULT, "completed"];
}

/** Streams the results into settlement in groups, keeping the claim while it takes. */
async function collect(step: NativeStep, { target, isByok }: ResolvedTarget, upstreamId: string): Promise<void> {
  const { deps, plan, attempt, api, signal } = step;
  const { sequelize } = deps;
  const batchId = plan.batch.id;
  const prefix = `${batchId}-`;
  let group: SettledItem[] = [];
  const settle = async () => {
    await settleItems(sequelize, nativeLeaseOwner(batchId), group);
    group = [];
    await pollAgainIn(step, step.settings.leaseSeconds * 1000);
  };
  for await (const result of api.results(target, upstreamId, signal)) {
    const idx = result.customId.startsWith(prefix) ? Number(result.customId.slice(prefix.length)) : NaN;
    // A result we did not ask for (the provider's mistake) is skipped, not guessed at.
    if (!Number.isSafeInteger(idx) || idx < 0) continue;
    const item = { batchId, idx, itemId: result.customId };
    group.push(
      result.ok
        ? answered(item, plan.format, attempt, isByok, result.body, result.usage, null)
        : refused(
            item,
            plan.format,
            attempt,
            new UpstreamError("status", result.message, { status: result.statusCode }),
          ),
    );
    if (group.length >= RESULT_GROUP) await settle();
  }
  if (group.length > 0) await settle();
}

async function pollAgainIn(step: NativeStep, delayMs: number): Promise<void> {
  await pollNativeBatchIn(step.deps.sequelize, step.plan.batch.id, delayMs / 1000);
}

import type { JsonObject } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import {
  NO_USAGE,
  UpstreamError,
  affinityOf,
  costUsd,
  isFreeEndpoint,
  isRetryable,
  isServed,
  providerFor,
  toGatewayError,
  usedTokens,
} from "../../engine/index.js";
import { httpErrorOf } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import type { Attempt } from "../../engine/inference/routing.js";
import type { KeyChoice } from "../../engine/key-pools/key-pools.js";
import type { UpstreamTarget, UpstreamUsage } from "../../engine/providers/provider.js";
import type { BatchFormat } from "./batch-formats.js";
import { filteredItemInTurn } from "./batch-item-filters.js";
import { admitItem } from "./batch-item-admission.js";
import type { BatchPlan } from "./batch-plan.js";
import { errorResult } from "./batch-store.js";
import type { SettledItem } from "./batch-store-settlement.js";

/**
 * One run of one batch item through the batch's route, like a live call: admitted against the
 * rate limits of its key and workspace (batch-item-admission.ts), then the endpoints in the
 * planned order, falling back on retryable failures, with the same error mapping and cost.
 * The outcome is either final (a result to record), a retry after a delay, when every endpoint
 * failed in a way that may pass (rate limits, 5xx, timeouts) and tries are left, or a wait for the
 * next window of a rate limit of the gateway's own, which spends no try.
 */
export type ItemOutcome =
  | { kind: "final"; item: SettledItem }
  | { kind: "retry"; delayMs: number }
  | { kind: "wait"; delayMs: number };

export interface ClaimedItem {
  batchId: string;
  idx: number;
  itemId: string;
  body: JsonObject;
  /** Tries so far, this one included. */
  attempt: number;
}

export interface RunLimits {
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  /** Waits for a slot of the provider's concurrency limit. */
  slot<T>(provider: string, run: () => Promise<T>): Promise<T>;
}

export async function runItem(
  deps: Deps,
  plan: BatchPlan,
  item: ClaimedItem,
  limits: RunLimits,
  signal: AbortSignal,
): Promise<ItemOutcome> {
  // One item per turn of the event loop when the batch has content filters (filter-turns.ts).
  const filtered = await filteredItemInTurn(deps, plan, item);
  if ("refusal" in filtered)
    return { kind: "final", item: blockedItem(item, plan.format, plan.attempts[0]!, filtered.refusal) };
  const admission = await admitItem(deps, plan, item.body);
  if (admission.kind === "wait") return admission;
  if (admission.kind === "refused")
    return {
      kind: "final",
      item: blockedItem(item, plan.format, plan.attempts[0]!, admission.error, "rate_limit_exceeded"),
    };
  let outcome: ItemOutcome | undefined;
  try {
    outcome = await runAdmitted(deps, plan, item, filtered.request, limits, signal);
    return outcome;
  } finally {
    // What the item used of its token limits; a retry used nothing.
    if (admission.ticket)
      deps.engine.leases.settleApart(admission.ticket, outcome?.kind === "final" ? usedTokens(outcome.item) : 0);
  }
}

async function runAdmitted(
  deps: Deps,
  plan: BatchPlan,
  item: ClaimedItem,
  request: JsonObject,
  limits: RunLimits,
  signal: AbortSignal,
): Promise<ItemOutcome> {
  // Keys of a provider's pool are chosen as for a live call of the same prompt.
  let affinity: number | undefined;
  const keyChoice: KeyChoice = {
    affinity: () => (affinity ??= affinityOf(undefined, request)),
    triedKeys: [],
    judgedKey: undefined,
  };
  const outcome = await deps.engine.tryEndpoints(
    plan.context,
    plan.attempts,
    (target, attempt) => {
      const callSignal = AbortSignal.any([signal, AbortSignal.timeout(limits.timeoutMs)]);
      return limits.slot(attempt.endpoint.providerSlug, () => callUpstream(plan.format, target, request, callSignal));
    },
    { keyChoice, signal },
  );
  if (outcome !== undefined && isServed(outcome)) {
    const { value, attempt, isByok, latencyMs } = outcome;
    return { kind: "final", item: answered(item, plan.format, attempt, isByok, value.answer, value.usage, latencyMs) };
  }
  // The gateway's own failure, or the worker stopping: not the item's outcome.
  if (outcome !== undefined && (!(outcome.error instanceof UpstreamError) || signal.aborted)) throw outcome.error;
  const failure =
    outcome?.error instanceof UpstreamError
      ? outcome.error
      : new UpstreamError("connect", "no endpoint could be tried");
  if (isRetryable(failure) && item.attempt < limits.maxAttempts) {
    const backoff = limits.retryBaseMs * 2 ** (item.attempt - 1);
    const retryAfterMs = (failure.options.retryAfterS ?? 0) * 1000;
    return { kind: "retry", delayMs: Math.max(backoff, retryAfterMs) };
  }
  return { kind: "final", item: refused(item, plan.format, outcome?.attempt ?? plan.attempts[0]!, failure) };
}

/**
 * An item the provider answered, in the endpoint's format: our id, the model asked for and the
 * provider that served it, as on the live route.
 */
export function answered(
  item: ItemRef,
  format: BatchFormat,
  attempt: Attempt,
  isByok: boolean,
  answer: JsonObject,
  usage: UpstreamUsage | undefined,
  latencyMs: number | null,
): SettledItem {
  if (format.api === "chat")
    Object.assign(answer, { id: item.itemId, model: attempt.model.id, provider: attempt.endpoint.providerName });
  const body = format.fromPipeline(answer, { id: item.itemId, createdAt: Math.floor(Date.now() / 1000) });
  return settled(
    item,
    format.api,
    attempt,
    isByok,
    true,
    200,
    { response: { body, request_id: item.itemId, status_code: 200 } },
    usage,
    latencyMs,
  );
}

/** An item whose final failure is `failure`, with the error mapping of the live route. */
export function refused(item: ItemRef, format: BatchFormat, attempt: Attempt, failure: UpstreamError): SettledItem {
  const error = httpErrorOf(toGatewayError(failure, attempt.endpoint.providerName));
  // Upstream 408 and 429 both map to 429 (upstream-errors.ts).
  const result = errorResult(
    error.message,
    typeOf(error.status),
    error.status === 429 ? "rate_limit_exceeded" : errorTypeOf(failure, error.status),
  );
  return settled(item, format.api, attempt, false, false, error.status, result, undefined, null);
}

/**
 * An item the gateway refused before sending it, as the live route would: a guardrail's content
 * filter (403), or a token limit its worst case alone passes (429). Never sent, nothing to bill.
 */
export function blockedItem(
  item: ItemRef,
  format: BatchFormat,
  attempt: Attempt,
  refusal: ConnectError,
  errorType = "content_filtered",
): SettledItem {
  const { status, message } = httpErrorOf(refusal);
  return settled(
    item,
    format.api,
    attempt,
    false,
    false,
    status,
    errorResult(message, typeOf(status), errorType),
    undefined,
    null,
  );
}

/** Which item a result belongs to. */
export type ItemRef = Pick<ClaimedItem, "batchId" | "idx" | "itemId">;

async function callUpstream(
  format: BatchFormat,
  target: UpstreamTarget,
  request: JsonObject,
  signal: AbortSignal,
): Promise<{ answer: JsonObject; usage: UpstreamUsage | undefined }> {
  const adapter = providerFor(target.kind).chat;
  if (format.api === "embeddings") {
    const result = await adapter.embeddings(target, request, signal);
    const answer: JsonObject = {
      object: "list",
      data: result.vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
      usage: { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens },
    };
    return { answer, usage: { ...NO_USAGE, promptTokens: result.promptTokens } };
  }
  const result = await adapter.chat(target, request, signal);
  return { answer: result.body, usage: result.usage };
}

function settled(
  item: ItemRef,
  api: SettledItem["api"],
  attempt: Attempt,
  isByok: boolean,
  succeeded: boolean,
  httpStatus: number,
  result: SettledItem["result"],
  usage: UpstreamUsage | undefined,
  latencyMs: number | null,
): SettledItem {
  const counted = usage ?? NO_USAGE;
  return {
    batchId: item.batchId,
    idx: item.idx,
    itemId: item.itemId,
    succeeded,
    result,
    api,
    modelId: attempt.model.id,
    providerSlug: attempt.endpoint.providerSlug,
    endpointId: attempt.endpoint.id,
    httpStatus,
    ...counted,
    cost: succeeded ? costUsd(attempt.endpoint.pricing, counted) : "0",
    isByok,
    isFree: isFreeEndpoint(attempt.endpoint),
    latencyMs,
  };
}

/** OpenAI's error `type` family for an HTTP status. */
function typeOf(status: number): string {
  if (status === 400 || status === 413) return "invalid_request_error";
  if (status === 429) return "rate_limit_error";
  if (status === 401 || status === 403) return "permission_error";
  return "server_error";
}

function errorTypeOf(failure: UpstreamError, status: number): string {
  if (failure.failure === "timeout") return "timeout";
  if (status === 400 || status === 413) return "invalid_request";
  return "provider_error";
}

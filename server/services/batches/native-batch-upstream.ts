import type { CatalogEndpoint } from "../../engine/catalog/catalog.js";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError, errorMessage } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import type { Attempt } from "../../engine/inference/routing.js";
import { requiredPart } from "../../engine/index.js";
import type { BatchFormat } from "./batch-formats.js";
import type { BatchRow } from "./batch-store.js";

/**
 * Which batches run on a provider's own batch API, and reaching that batch again afterwards.
 * Decided once, at submission: the batch's first-choice endpoint is a configured provider with
 * `native_batches` and the items are chat-shaped (chat, Responses, Messages; embeddings have no
 * provider batch API here). Such a batch runs on that provider only: a provider batch cannot fall
 * back item by item.
 */
export function nativeProviderFor(deps: Deps, format: BatchFormat, attempts: readonly Attempt[]): string | null {
  const first = attempts[0]?.endpoint;
  if (!first || first.privateEndpointId || format.api !== "chat") return null;
  return deps.engine.catalog.providers.get(first.providerSlug)?.nativeBatches ? first.providerSlug : null;
}

/** The catalog endpoint that serves `batch` on its upstream provider, if the catalog still has it. */
export function upstreamEndpointOf(deps: Deps, batch: BatchRow): CatalogEndpoint | undefined {
  const model = deps.engine.catalog.models.get(batch.model);
  return model?.endpoints.find(
    (endpoint) => endpoint.providerSlug === batch.upstream_provider && !endpoint.privateEndpointId,
  );
}

/**
 * DELETE's upstream half: the provider-side batch and its files go first, so a failure leaves the
 * batch in place for a later DELETE (502), and a retried DELETE finds already removed parts gone.
 * A batch stopped on our side (failed, expired) may still run upstream: it is cancelled first.
 */
export async function removeUpstreamBatch(
  deps: Deps,
  caller: Caller,
  batch: BatchRow,
): Promise<{ provider: string; status: string } | undefined> {
  if (!batch.upstream_provider || !batch.upstream_batch_id) return undefined;
  const provider = batch.upstream_provider;
  const endpoint = upstreamEndpointOf(deps, batch);
  if (!endpoint)
    throw gatewayError(
      502,
      `Provider ${provider} holding this batch is no longer configured; the batch was not deleted`,
    );
  const api = requiredPart(deps.engine.catalog.providers.get(provider)!.kind, "nativeBatches");
  const upstreamId = batch.upstream_batch_id;
  const signal = AbortSignal.timeout(deps.config.requestTimeoutMs);
  // The caller's workspace is the batch's, so its own (BYOK) key is the one the batch went up with.
  const context = await deps.engine.callerContext(caller);
  try {
    const { target } = await deps.engine.resolveTarget(context, endpoint);
    if (batch.status !== "completed") await api.cancel(target, upstreamId, signal).catch(() => undefined);
    return { provider, status: await api.remove(target, upstreamId, signal) };
  } catch (err) {
    throw gatewayError(
      502,
      `Provider ${provider} could not delete its copy of the batch (${errorMessage(err)}); ` +
        "the batch was not deleted, try again later",
      { retryable: true },
    );
  }
}

import type { Sequelize } from "sequelize";
import { mostUsedProvider, type BatchRow } from "./batch-store.js";

/** `deletion.upstream` of DELETE /batches/{id} (docs/api/batches.md): never null. */
export interface UpstreamDeletion {
  provider: string;
  status: string;
}

/**
 * No provider holds a copy of the batch (the gateway ran its items itself, one call each), so no
 * upstream batch could be deleted: `unsupported`, one of the two values the contract lists, which
 * clients with an enum of them accept (an earlier `none` was outside it).
 */
export const NO_PROVIDER_COPY = "unsupported";

/**
 * The answer for a batch that has no provider-side copy: the provider its items went to (the one
 * that answered most of them), or "" when none reached a provider (cancelled or expired before
 * running).
 */
export async function withoutProviderCopy(sequelize: Sequelize, batch: BatchRow): Promise<UpstreamDeletion> {
  if (batch.upstream_provider) return { provider: batch.upstream_provider, status: NO_PROVIDER_COPY };
  return { provider: (await mostUsedProvider(sequelize, batch)) ?? "", status: NO_PROVIDER_COPY };
}

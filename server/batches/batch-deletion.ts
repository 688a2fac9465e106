import { QueryTypes, type Sequelize } from "sequelize";
import type { BatchRow } from "./batch-rows.js";

/** `deletion.upstream` of DELETE /batches/{id} (spec 4.1): never null. */
export interface UpstreamDeletion {
  provider: string;
  status: string;
}

/** No provider holds a copy of the batch: the gateway ran its items itself, one call each. */
export const NO_PROVIDER_COPY = "none";

/**
 * The answer for a batch that has no provider-side copy: the provider its items went to (the one
 * that answered most of them, from their ledger rows), or "" when none reached a provider
 * (cancelled or expired before running). The ledger is read by the batch's key from its creation
 * on, an index range, so deleting an old batch does not scan the whole ledger.
 */
export async function withoutProviderCopy(sequelize: Sequelize, batch: BatchRow): Promise<UpstreamDeletion> {
  if (batch.upstream_provider) return { provider: batch.upstream_provider, status: NO_PROVIDER_COPY };
  const [row] = await sequelize.query<{ provider_slug: string }>(
    `SELECT provider_slug FROM usage_ledger
      WHERE key_hash = :keyHash AND created_at >= :createdAt AND batch_id = :batchId AND provider_slug IS NOT NULL
      GROUP BY provider_slug
      ORDER BY count(*) FILTER (WHERE status = 'success') DESC, count(*) DESC, provider_slug
      LIMIT 1`,
    { type: QueryTypes.SELECT, replacements: { keyHash: batch.key_hash, createdAt: batch.created_at, batchId: batch.id } },
  );
  return { provider: row?.provider_slug ?? "", status: NO_PROVIDER_COPY };
}

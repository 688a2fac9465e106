import { QueryTypes, type Sequelize } from "sequelize";
import type { CachedAnswer } from "./cached-answer.js";
import type { CacheScope } from "./cache-key.js";

/** The `response_cache` table (migration 0026-response-cache). */
interface Row {
  answer: string;
  endpoint_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  cost_usd: string;
  created_at: Date;
  expires_at: Date;
}

/** A live entry and when it expires; undefined when there is none, or it has expired. */
export async function readCachedAnswer(
  sequelize: Sequelize,
  key: string,
): Promise<{ entry: CachedAnswer; expiresAt: number } | undefined> {
  const [row] = await sequelize.query<Row>(
    `SELECT answer, endpoint_id, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, cache_write_tokens,
            cost_usd::text AS cost_usd, created_at, expires_at
       FROM response_cache WHERE key = $1 AND expires_at > now()`,
    { bind: [key], type: QueryTypes.SELECT },
  );
  if (!row) return undefined;
  const entry: CachedAnswer = {
    answer: JSON.parse(row.answer) as CachedAnswer["answer"],
    usage: {
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      reasoningTokens: row.reasoning_tokens,
      cachedTokens: row.cached_tokens,
      cacheWriteTokens: row.cache_write_tokens,
    },
    costUsd: row.cost_usd,
    endpointId: row.endpoint_id,
    created: Math.floor(row.created_at.getTime() / 1000),
  };
  return { entry, expiresAt: row.expires_at.getTime() };
}

/** Stores (or replaces) an entry; `text` is its answer as JSON, whose length is its size. */
export async function writeCachedAnswer(
  sequelize: Sequelize,
  key: string,
  scope: CacheScope,
  entry: CachedAnswer,
  text: string,
  ttlS: number,
): Promise<void> {
  const { usage } = entry;
  await sequelize.query(
    `INSERT INTO response_cache (key, workspace_id, api, endpoint_id, answer, prompt_tokens, completion_tokens,
                                 reasoning_tokens, cached_tokens, cache_write_tokens, cost_usd, size_bytes, created_at,
                                 expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, to_timestamp($13), now() + make_interval(secs => $14))
     ON CONFLICT (key) DO UPDATE SET answer = EXCLUDED.answer, endpoint_id = EXCLUDED.endpoint_id,
       prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens,
       reasoning_tokens = EXCLUDED.reasoning_tokens, cached_tokens = EXCLUDED.cached_tokens,
       cache_write_tokens = EXCLUDED.cache_write_tokens, cost_usd = EXCLUDED.cost_usd, size_bytes = EXCLUDED.size_bytes,
       created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
    {
      bind: [
        key,
        scope.workspaceId,
        scope.api,
        entry.endpointId,
        text,
        usage.promptTokens,
        usage.completionTokens,
        usage.reasoningTokens,
        usage.cachedTokens,
        usage.cacheWriteTokens ?? 0,
        entry.costUsd,
        Buffer.byteLength(text),
        entry.created,
        ttlS,
      ],
    },
  );
}

/**
 * Deletes expired entries, then, while the rest hold more than `maxBytes`, whole entries: the
 * oldest of the workspaces above their fair share (`maxBytes` over the number of workspaces with
 * entries), only as many as bring the total under `maxBytes`. A workspace within its share keeps
 * its entries however much another stores. How many went, and the bytes left.
 *
 * Each workspace's entries beyond its share are those past it counting from its newest (a running
 * sum per workspace); once all of them went, every workspace holds at most its share, so the total
 * is within `maxBytes`. Among them the oldest go first (a running sum over them all), until what
 * they free covers the excess.
 */
export async function sweepCachedAnswers(
  sequelize: Sequelize,
  maxBytes: number,
): Promise<{ deleted: number; bytes: number }> {
  const [result] = await sequelize.query<{ deleted: string; bytes: string }>(
    `WITH expired AS (
       DELETE FROM response_cache WHERE expires_at <= now() RETURNING key
     ), live AS (
       SELECT key, workspace_id, size_bytes, created_at FROM response_cache WHERE key NOT IN (SELECT key FROM expired)
     ), totals AS (
       SELECT coalesce(sum(size_bytes), 0) AS bytes, count(DISTINCT workspace_id) AS workspaces FROM live
     ), beyond_share AS (
       SELECT per_workspace.key, per_workspace.size_bytes, per_workspace.created_at
         FROM (SELECT key, size_bytes, created_at,
                      sum(size_bytes) OVER (PARTITION BY workspace_id ORDER BY created_at DESC, key DESC) AS upto
                 FROM live) per_workspace, totals
        WHERE totals.bytes > $1 AND per_workspace.upto > $1::numeric / nullif(totals.workspaces, 0)
     ), doomed AS (
       SELECT oldest_first.key
         FROM (SELECT key, size_bytes, sum(size_bytes) OVER (ORDER BY created_at, key) AS freed
                 FROM beyond_share) oldest_first, totals
        WHERE oldest_first.freed - oldest_first.size_bytes < totals.bytes - $1
     ), evicted AS (
       DELETE FROM response_cache WHERE key IN (SELECT key FROM doomed) RETURNING size_bytes
     )
     SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM evicted) AS deleted,
            (SELECT bytes FROM totals) - coalesce((SELECT sum(size_bytes) FROM evicted), 0) AS bytes`,
    { bind: [maxBytes], type: QueryTypes.SELECT },
  );
  return { deleted: Number(result?.deleted ?? 0), bytes: Math.max(0, Number(result?.bytes ?? 0)) };
}

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
export async function readCachedAnswer(sequelize: Sequelize, key: string): Promise<{ entry: CachedAnswer; expiresAt: number } | undefined> {
  const [row] = await sequelize.query<Row>(
    `SELECT answer, endpoint_id, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, cache_write_tokens, cost_usd::text AS cost_usd, created_at, expires_at
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
export async function writeCachedAnswer(sequelize: Sequelize, key: string, scope: CacheScope, entry: CachedAnswer, text: string, ttlS: number): Promise<void> {
  const { usage } = entry;
  await sequelize.query(
    `INSERT INTO response_cache (key, workspace_id, api, endpoint_id, answer, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens,
                                 cache_write_tokens, cost_usd, size_bytes, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, to_timestamp($13), now() + make_interval(secs => $14))
     ON CONFLICT (key) DO UPDATE SET answer = EXCLUDED.answer, endpoint_id = EXCLUDED.endpoint_id, prompt_tokens = EXCLUDED.prompt_tokens,
       completion_tokens = EXCLUDED.completion_tokens, reasoning_tokens = EXCLUDED.reasoning_tokens, cached_tokens = EXCLUDED.cached_tokens,
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
 * Deletes expired entries, then, while the rest hold more than `maxBytes`, the oldest whole
 * entries; how many went, and the bytes left.
 */
export async function sweepCachedAnswers(sequelize: Sequelize, maxBytes: number): Promise<{ deleted: number; bytes: number }> {
  const [result] = await sequelize.query<{ deleted: string; bytes: string }>(
    `WITH expired AS (
       DELETE FROM response_cache WHERE expires_at <= now() RETURNING key
     ), ranked AS (
       SELECT key, sum(size_bytes) OVER (ORDER BY created_at DESC, key DESC) AS upto
         FROM response_cache WHERE key NOT IN (SELECT key FROM expired)
     ), evicted AS (
       DELETE FROM response_cache WHERE key IN (SELECT key FROM ranked WHERE upto > $1) RETURNING size_bytes
     )
     SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM evicted) AS deleted,
            coalesce((SELECT sum(size_bytes) FROM response_cache), 0) - coalesce((SELECT sum(size_bytes) FROM evicted), 0)
              - coalesce((SELECT sum(size_bytes) FROM response_cache WHERE key IN (SELECT key FROM expired)), 0) AS bytes`,
    { bind: [maxBytes], type: QueryTypes.SELECT },
  );
  return { deleted: Number(result?.deleted ?? 0), bytes: Math.max(0, Number(result?.bytes ?? 0)) };
}

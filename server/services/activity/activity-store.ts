/**
 * The reads of GET /activity, GET /generation and GET /generations: the usage ledger (one row per
 * upstream attempt, migration 0003) grouped by day and endpoint, or by generation, with the
 * catalog's names (`providers`, `catalog_models`, `catalog_endpoints`) where it still lists them.
 * Every value is a bind parameter; nothing but rows leaves the file.
 *
 * @module
 */
import { QueryTypes, type Sequelize } from "sequelize";

/** Whose calls a read sees: the whole organization (a management key), or one key's own calls. */
export interface LedgerScope {
  organizationId: string;
  /** The only key whose calls are seen; null for the whole organization. */
  keyHash: string | null;
}

export interface ActivityFilter {
  /** [from, to) in UTC. */
  from: Date;
  to: Date;
  keyHash?: string;
  memberUserId?: string;
}

/** One day and endpoint; pg returns BIGINT and NUMERIC aggregates as strings. */
export interface ActivityRow {
  date: string;
  model: string;
  model_permaslug: string;
  endpoint_id: string | null;
  provider_name: string | null;
  usage: string;
  byok_usage: string;
  requests: string;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
}

/**
 * Grouped first, named after: a catalog join per ledger row would cost more than one per group.
 * Spend is split as GET /key and analytics split it: `usage` paid, BYOK apart.
 */
export function activityRows(sequelize: Sequelize, scope: LedgerScope, filter: ActivityFilter): Promise<ActivityRow[]> {
  return sequelize.query<ActivityRow>(
    `WITH days AS (
       SELECT to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
              l.model_id, l.endpoint_id, l.provider_slug,
              coalesce(sum(l.cost_usd) FILTER (WHERE NOT l.is_byok), 0) AS usage,
              coalesce(sum(l.cost_usd) FILTER (WHERE l.is_byok), 0) AS byok_usage,
              count(*) AS requests, sum(l.prompt_tokens) AS prompt_tokens,
              sum(l.completion_tokens) AS completion_tokens, sum(l.reasoning_tokens) AS reasoning_tokens
         FROM usage_ledger l
        WHERE ${inScope("l")} AND l.created_at >= $from::timestamptz AND l.created_at < $to::timestamptz
          AND ($keyFilter::text IS NULL OR l.key_hash = $keyFilter::bpchar)
          AND ($member::text IS NULL OR l.member_user_id = $member)
          -- A call a rate limit refused (429, docs/api/limits.md) reached no endpoint: analytics counts it,
          -- activity does not.
          AND l.rate_limit IS NULL
        GROUP BY 1, l.model_id, l.endpoint_id, l.provider_slug
     )
     SELECT d.date, d.model_id AS model, coalesce(m.canonical_slug, d.model_id) AS model_permaslug, d.endpoint_id,
            coalesce(p.name, d.provider_slug) AS provider_name, d.usage, d.byok_usage, d.requests, d.prompt_tokens,
            d.completion_tokens, d.reasoning_tokens
       FROM days d
       LEFT JOIN catalog_models m ON m.id = d.model_id
       LEFT JOIN providers p ON p.slug = d.provider_slug
      ORDER BY d.date DESC, d.usage + d.byok_usage DESC, d.model_id, d.endpoint_id NULLS LAST`,
    {
      type: QueryTypes.SELECT,
      bind: {
        ...scopeValues(scope),
        from: filter.from.toISOString(),
        to: filter.to.toISOString(),
        keyFilter: filter.keyHash ?? null,
        member: filter.memberUserId ?? null,
      },
    },
  );
}

/** One generation: its last attempt's columns, the sums over all its attempts, and the attempts. */
export interface GenerationRow {
  generation_id: string;
  id: string;
  created_at: Date;
  /** `created_at` with its microseconds, for list cursors. */
  cursor_at: string;
  api: string;
  model_id: string;
  status: string;
  http_status: number;
  streamed: boolean;
  is_byok: boolean;
  cache_hit: boolean;
  /** numeric as text. */
  cache_savings_usd: string;
  latency_ms: number | null;
  generation_ms: number | null;
  end_user: string | null;
  key_hash: string;
  workspace_id: string;
  provider_name: string | null;
  data_region: string | null;
  total_cost: string;
  paid_cost: string;
  byok_cost: string | null;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
  cached_tokens: string;
  attempts: AttemptJson[];
}

/** One attempt as `json_build_object` writes it below. */
export interface AttemptJson {
  endpoint_id: string | null;
  model_permaslug: string;
  provider_name: string | null;
  status: number;
  latency: number | null;
  is_byok: boolean;
}

export interface GenerationFilter {
  model?: string;
  keyHash?: string;
  status?: string;
  /** [start, end) on the last attempt's time. */
  start?: Date;
  end?: Date;
  /** (cursor_at, ledger row id) of the previous page's last generation. */
  after?: readonly [string, string];
}

export async function findGenerationRow(
  sequelize: Sequelize,
  scope: LedgerScope,
  generationId: string,
): Promise<GenerationRow | undefined> {
  const [row] = await sequelize.query<GenerationRow>(generationStatement("l.generation_id = $generationId"), {
    type: QueryTypes.SELECT,
    bind: { ...scopeValues(scope), generationId, limit: 1 },
  });
  return row;
}

/** Newest first, by the time of each generation's last attempt. */
export function listGenerationRows(
  sequelize: Sequelize,
  scope: LedgerScope,
  filter: GenerationFilter,
  limit: number,
): Promise<GenerationRow[]> {
  const where = [
    "($model::text IS NULL OR l.model_id = $model)",
    "($keyFilter::text IS NULL OR l.key_hash = $keyFilter::bpchar)",
    "($status::text IS NULL OR l.status = $status)",
    "($start::timestamptz IS NULL OR l.created_at >= $start)",
    "($end::timestamptz IS NULL OR l.created_at < $end)",
    "($afterAt::timestamptz IS NULL OR (l.created_at, l.id) < ($afterAt, $afterId::uuid))",
  ];
  return sequelize.query<GenerationRow>(generationStatement(where.join(" AND ")), {
    type: QueryTypes.SELECT,
    bind: {
      ...scopeValues(scope),
      model: filter.model ?? null,
      keyFilter: filter.keyHash ?? null,
      status: filter.status ?? null,
      start: filter.start?.toISOString() ?? null,
      end: filter.end?.toISOString() ?? null,
      afterAt: filter.after?.[0] ?? null,
      afterId: filter.after?.[1] ?? null,
      limit,
    },
  });
}

/**
 * Generations are the ledger rows that are their generation's last attempt: no later row of the
 * same generation (index usage_ledger_by_generation), a success or cancellation winning over an
 * error recorded in the same millisecond, as a fallback follows the failure it answers. `where` is
 * one of the two fixed conditions above, never request text.
 */
function generationStatement(where: string): string {
  return `
    WITH last AS (
      SELECT l.*, to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
        FROM usage_ledger l
       WHERE ${inScope("l")} AND ${where}
         AND NOT EXISTS (
           SELECT 1 FROM usage_ledger n
            WHERE n.generation_id = l.generation_id AND n.organization_id = l.organization_id
              AND n.key_hash = l.key_hash
              AND (n.created_at, n.status <> 'error', n.id) > (l.created_at, l.status <> 'error', l.id))
       ORDER BY l.created_at DESC, l.id DESC
       LIMIT $limit::integer
    )
    SELECT g.generation_id, g.id, g.created_at, g.cursor_at, g.api, g.model_id, g.status, g.http_status, g.streamed,
           g.is_byok, g.cache_hit, g.cache_savings_usd::text AS cache_savings_usd,
           g.latency_ms, g.generation_ms, g.end_user, g.key_hash, g.workspace_id::text AS workspace_id,
           coalesce(p.name, g.provider_slug) AS provider_name, e.region AS data_region, a.*
      FROM last g
      LEFT JOIN providers p ON p.slug = g.provider_slug
      LEFT JOIN catalog_endpoints e ON e.id = g.endpoint_id
     CROSS JOIN LATERAL (
       SELECT sum(r.cost_usd) AS total_cost,
              coalesce(sum(r.cost_usd) FILTER (WHERE NOT r.is_byok), 0) AS paid_cost,
              sum(r.cost_usd) FILTER (WHERE r.is_byok) AS byok_cost,
              sum(r.prompt_tokens) AS prompt_tokens, sum(r.completion_tokens) AS completion_tokens,
              sum(r.reasoning_tokens) AS reasoning_tokens, sum(r.cached_tokens) AS cached_tokens,
              json_agg(json_build_object(
                'endpoint_id', r.endpoint_id, 'model_permaslug', coalesce(rm.canonical_slug, r.model_id),
                'provider_name', coalesce(rp.name, r.provider_slug), 'status', r.http_status, 'latency', r.latency_ms,
                'is_byok', r.is_byok) ORDER BY r.created_at, r.status <> 'error', r.id) AS attempts
         FROM usage_ledger r
         LEFT JOIN catalog_models rm ON rm.id = r.model_id
         LEFT JOIN providers rp ON rp.slug = r.provider_slug
        WHERE r.generation_id = g.generation_id AND r.organization_id = g.organization_id AND r.key_hash = g.key_hash
     ) a
     ORDER BY g.created_at DESC, g.id DESC`;
}

/** `bpchar` as the column is `char(64)`: compared as text, the key's index could not serve it. */
function inScope(alias: string): string {
  return (
    `${alias}.organization_id = $organizationId::uuid AND ` +
    `($ownKey::text IS NULL OR ${alias}.key_hash = $ownKey::bpchar)`
  );
}

function scopeValues(scope: LedgerScope): { organizationId: string; ownKey: string | null } {
  return { organizationId: scope.organizationId, ownKey: scope.keyHash };
}

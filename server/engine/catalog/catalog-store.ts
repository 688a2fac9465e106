/**
 * The SQL of the catalog family: the configured catalog written into `providers`, `catalog_models`
 * and `catalog_endpoints`, and the recent calls of endpoints read from `usage_ledger` for their
 * health and speed (endpoint-stats.ts).
 *
 * @module
 */
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import { holdStartUpLock } from "../../platform/db/start-up-locks.js";
import type { Catalog } from "./catalog.js";

/**
 * Upserts providers (never their API keys), models and endpoints in one transaction, under the sync
 * lock; rows the config no longer declares get `listed = false`. Returns each model's stored
 * `created` in epoch seconds.
 */
export async function writeCatalog(sequelize: Sequelize, catalog: Catalog): Promise<Map<string, number>> {
  const providers = [...catalog.providers.values()].map((p) => ({
    slug: p.slug,
    name: p.name,
    kind: p.kind,
    base_url: p.baseUrl,
  }));
  const models = [...catalog.models.values()];
  const modelRows = models.map((m) => ({
    id: m.id,
    canonical_slug: m.canonicalSlug,
    name: m.name,
    description: m.description,
    created: m.created > 0 ? new Date(m.created * 1000).toISOString() : null,
    context_length: m.contextLength,
    input_modalities: m.inputModalities,
    output_modalities: m.outputModalities,
    tokenizer: m.tokenizer,
    instruct_type: m.instructType,
    supported_voices: m.supportedVoices,
    default_parameters: m.defaultParameters,
    per_request_limits: m.perRequestLimits,
    expiration_date: m.expirationDate,
    knowledge_cutoff: m.knowledgeCutoff,
    is_moderated: m.isModerated,
  }));
  const endpointRows = models.flatMap((m) =>
    m.endpoints.map((e) => ({
      id: e.id,
      model_id: e.modelId,
      provider_slug: e.providerSlug,
      tag: e.tag,
      upstream_model_id: e.upstreamModelId,
      context_length: e.contextLength,
      max_completion_tokens: e.maxCompletionTokens,
      max_prompt_tokens: e.maxPromptTokens,
      quantization: e.quantization,
      price_prompt: e.pricing.prompt,
      price_completion: e.pricing.completion,
      price_image: e.pricing.image,
      price_request: e.pricing.request,
      supported_parameters: e.supportedParameters,
      supports_implicit_caching: e.supportsImplicitCaching,
      region: e.region,
      zdr: e.zdr,
      data_collection: e.dataCollection,
    })),
  );

  return sequelize.transaction(async (transaction) => {
    await holdStartUpLock(sequelize, "catalogSync", transaction);
    await run(sequelize, transaction, UPSERT_PROVIDERS, providers);
    const rows = await sequelize.query<{ id: string; created: string }>(UPSERT_MODELS, {
      type: QueryTypes.SELECT,
      replacements: { rows: JSON.stringify(modelRows) },
      transaction,
    });
    await run(sequelize, transaction, UPSERT_ENDPOINTS, endpointRows);
    const listed: [table: string, column: string, keys: string[]][] = [
      ["catalog_endpoints", "id", endpointRows.map((r) => r.id)],
      ["catalog_models", "id", models.map((m) => m.id)],
      ["providers", "slug", providers.map((p) => p.slug)],
    ];
    for (const [table, column, keys] of listed) await unlist(sequelize, transaction, table, column, keys);
    return new Map(rows.map((row) => [row.id, Number(row.created)]));
  });
}

async function run(sequelize: Sequelize, transaction: Transaction, sql: string, rows: object[]): Promise<void> {
  await sequelize.query(sql, { replacements: { rows: JSON.stringify(rows) }, transaction });
}

/** Table and key column names are constants of this file, never input. */
async function unlist(
  sequelize: Sequelize,
  transaction: Transaction,
  table: string,
  key: string,
  keep: string[],
): Promise<void> {
  await sequelize.query(
    `UPDATE ${table} SET listed = false, synced_at = now()
      WHERE listed AND ${key} NOT IN (SELECT jsonb_array_elements_text(CAST(:keep AS jsonb)))`,
    { replacements: { keep: JSON.stringify(keep) }, transaction },
  );
}

const UPSERT_PROVIDERS = `
  INSERT INTO providers AS t (slug, name, kind, base_url, listed, synced_at)
  SELECT slug, name, kind, base_url, true, now()
    FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(slug text, name text, kind text, base_url text)
  ON CONFLICT (slug) DO UPDATE
    SET name = excluded.name, kind = excluded.kind, base_url = excluded.base_url, listed = true, synced_at = now()`;

// The existing row's created is read before the upsert (under the sync lock, so nobody races it).
const UPSERT_MODELS = `
  INSERT INTO catalog_models AS t (id, canonical_slug, name, description, created, context_length, input_modalities,
      output_modalities, tokenizer, instruct_type, supported_voices, default_parameters, per_request_limits,
      expiration_date, knowledge_cutoff, is_moderated, listed, synced_at)
  SELECT r.id, r.canonical_slug, r.name, r.description, coalesce(r.created, existing.created, now()), r.context_length,
         r.input_modalities, r.output_modalities, r.tokenizer, r.instruct_type, r.supported_voices,
         r.default_parameters, r.per_request_limits, r.expiration_date, r.knowledge_cutoff, r.is_moderated, true, now()
    FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(id text, canonical_slug text, name text, description text,
           created timestamptz, context_length integer, input_modalities text[], output_modalities text[],
           tokenizer text, instruct_type text, supported_voices text[], default_parameters jsonb,
           per_request_limits jsonb, expiration_date date, knowledge_cutoff text, is_moderated boolean)
    LEFT JOIN catalog_models existing ON existing.id = r.id
  ON CONFLICT (id) DO UPDATE
    SET canonical_slug = excluded.canonical_slug, name = excluded.name, description = excluded.description,
        created = excluded.created, context_length = excluded.context_length,
        input_modalities = excluded.input_modalities, output_modalities = excluded.output_modalities,
        tokenizer = excluded.tokenizer, instruct_type = excluded.instruct_type,
        supported_voices = excluded.supported_voices, default_parameters = excluded.default_parameters,
        per_request_limits = excluded.per_request_limits, expiration_date = excluded.expiration_date,
        knowledge_cutoff = excluded.knowledge_cutoff, is_moderated = excluded.is_moderated, listed = true,
        synced_at = now()
  RETURNING t.id, floor(extract(epoch FROM t.created))::bigint AS created`;

const UPSERT_ENDPOINTS = `
  INSERT INTO catalog_endpoints AS t (id, model_id, provider_slug, tag, upstream_model_id, context_length,
      max_completion_tokens, max_prompt_tokens, quantization, price_prompt, price_completion, price_image,
      price_request, supported_parameters, supports_implicit_caching, region, zdr, data_collection, listed, synced_at)
  SELECT id, model_id, provider_slug, tag, upstream_model_id, context_length, max_completion_tokens, max_prompt_tokens,
         quantization, price_prompt, price_completion, price_image, price_request, supported_parameters,
         supports_implicit_caching, region, zdr, data_collection, true, now()
    FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(id text, model_id text, provider_slug text, tag text,
           upstream_model_id text, context_length integer, max_completion_tokens integer, max_prompt_tokens integer,
           quantization text, price_prompt numeric, price_completion numeric, price_image numeric,
           price_request numeric, supported_parameters text[], supports_implicit_caching boolean, region text,
           zdr boolean, data_collection text)
  ON CONFLICT (id) DO UPDATE
    SET model_id = excluded.model_id, provider_slug = excluded.provider_slug, tag = excluded.tag,
        upstream_model_id = excluded.upstream_model_id, context_length = excluded.context_length,
        max_completion_tokens = excluded.max_completion_tokens, max_prompt_tokens = excluded.max_prompt_tokens,
        quantization = excluded.quantization, price_prompt = excluded.price_prompt,
        price_completion = excluded.price_completion, price_image = excluded.price_image,
        price_request = excluded.price_request, supported_parameters = excluded.supported_parameters,
        supports_implicit_caching = excluded.supports_implicit_caching,
        region = excluded.region, zdr = excluded.zdr, data_collection = excluded.data_collection, listed = true,
        synced_at = now()`;

/** One endpoint's calls of the last day, aggregated by window (endpoint-stats.ts reads them). */
export interface EndpointCallsRow {
  endpoint_id: string;
  latency: number[] | null;
  throughput: number[] | null;
  calls_5m: string;
  down_5m: string;
  calls_30m: string;
  down_30m: string;
  calls_1d: string;
  down_1d: string;
}

// One pass over the last day of each endpoint's rows (index usage_ledger_by_endpoint). The
// aggregates' FILTERs carve out the windows.
const ENDPOINT_CALLS = `
  SELECT endpoint_id,
         percentile_cont(ARRAY[0.5, 0.75, 0.9, 0.99]) WITHIN GROUP (ORDER BY latency_ms)
           FILTER (WHERE status = 'success' AND latency_ms IS NOT NULL AND created_at > now() - interval '30 minutes')
             AS latency,
         percentile_cont(ARRAY[0.5, 0.75, 0.9, 0.99])
           WITHIN GROUP (ORDER BY completion_tokens * 1000.0 / (generation_ms - latency_ms))
           FILTER (WHERE status = 'success' AND completion_tokens > 0 AND generation_ms > latency_ms
                     AND created_at > now() - interval '30 minutes') AS throughput,
         count(*) FILTER (WHERE counted AND created_at > now() - interval '5 minutes') AS calls_5m,
         count(*) FILTER (WHERE down AND created_at > now() - interval '5 minutes') AS down_5m,
         count(*) FILTER (WHERE counted AND created_at > now() - interval '30 minutes') AS calls_30m,
         count(*) FILTER (WHERE down AND created_at > now() - interval '30 minutes') AS down_30m,
         count(*) FILTER (WHERE counted) AS calls_1d,
         count(*) FILTER (WHERE down) AS down_1d
    FROM (SELECT endpoint_id, created_at, status, latency_ms, generation_ms, completion_tokens,
                 status = 'success' OR (status = 'error' AND http_status >= 500) AS counted,
                 status = 'error' AND http_status >= 500 AS down
            FROM usage_ledger
           WHERE endpoint_id = ANY(CAST(:ids AS text[])) AND created_at > now() - interval '1 day') AS calls
   GROUP BY endpoint_id`;

/** Rows of the endpoints among `endpointIds` that had calls in the last day, in one statement. */
export async function endpointCalls(sequelize: Sequelize, endpointIds: readonly string[]): Promise<EndpointCallsRow[]> {
  return sequelize.query<EndpointCallsRow>(ENDPOINT_CALLS, {
    type: QueryTypes.SELECT,
    replacements: { ids: arrayLiteral(endpointIds) },
  });
}

/** A Postgres text[] literal; every element quoted, so ids with commas or braces stay whole. */
function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
}

/**
 * The store of analytics, POST /analytics/query: aggregates the caller's organization's usage
 * ledger by the metrics, dimensions, filters and granularity that catalog.ts lists. The statement
 * is built only from the fixed SQL fragments below, chosen by name; every value from the request is
 * a bind parameter. Checking a name and choosing its fragment are one step, so the request's
 * validation lives here with the SQL, and nothing but rows leaves the file.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import { QueryTypes, type Sequelize } from "sequelize";
import type { AnalyticsFilter, QueryAnalyticsRequest } from "../../../gen/gateway/v1/analytics_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { requestDate } from "../../platform/rpc/timestamps.js";
import { type DIMENSIONS, type GRANULARITIES, type METRICS, OPERATORS } from "./catalog.js";

type MetricName = (typeof METRICS)[number]["name"];
type DimensionName = (typeof DIMENSIONS)[number]["name"];
type GranularityName = (typeof GRANULARITIES)[number]["name"];
type OperatorName = (typeof OPERATORS)[number]["name"];

// Every entry of the catalog needs its fragment here, or this file does not compile.
const METRIC_SQL: Record<MetricName, string> = {
  requests: "count(*)",
  prompt_tokens: "coalesce(sum(l.prompt_tokens), 0)",
  completion_tokens: "coalesce(sum(l.completion_tokens), 0)",
  reasoning_tokens: "coalesce(sum(l.reasoning_tokens), 0)",
  cached_tokens: "coalesce(sum(l.cached_tokens), 0)",
  cache_write_tokens: "coalesce(sum(l.cache_write_tokens), 0)",
  total_tokens: "coalesce(sum(l.total_tokens), 0)",
  // Paid spend as GET /key `usage` counts it; BYOK spend apart, as `byok_usage`.
  cost_usd: "coalesce(sum(l.cost_usd) FILTER (WHERE NOT l.is_byok), 0)",
  byok_cost_usd: "coalesce(sum(l.cost_usd) FILTER (WHERE l.is_byok), 0)",
  // Calls the response cache answered, and what their original calls cost (each hit is billed 0).
  cache_hits: "count(*) FILTER (WHERE l.cache_hit)",
  cache_savings_usd: "coalesce(sum(l.cache_savings_usd), 0)",
  avg_latency_ms: "avg(l.latency_ms)",
  p95_latency_ms: "percentile_cont(0.95) WITHIN GROUP (ORDER BY l.latency_ms)",
  // A fraction from 0 to 1.
  error_rate: "(count(*) FILTER (WHERE l.status = 'error'))::float8 / nullif(count(*), 0)",
  // Completion tokens per second of upstream time, over successful calls that produced some.
  tokens_per_second:
    "(sum(l.completion_tokens) FILTER (WHERE l.status = 'success' AND l.completion_tokens > 0" +
    " AND l.generation_ms > 0))::float8 * 1000" +
    " / nullif(sum(l.generation_ms) FILTER (WHERE l.status = 'success' AND l.completion_tokens > 0" +
    " AND l.generation_ms > 0), 0)",
};

interface DimensionSql {
  sql: string;
  type: "string" | "boolean";
}

const DIMENSION_SQL: Record<DimensionName, DimensionSql> = {
  model: { sql: "l.model_id", type: "string" },
  provider: { sql: "l.provider_slug", type: "string" },
  api_key: { sql: "l.key_hash::text", type: "string" },
  workspace: { sql: "l.workspace_id::text", type: "string" },
  member: { sql: "l.member_user_id", type: "string" },
  end_user: { sql: "l.end_user", type: "string" },
  endpoint: { sql: "l.api", type: "string" },
  status: { sql: "l.status", type: "string" },
  is_byok: { sql: "l.is_byok", type: "boolean" },
  cache_hit: { sql: "l.cache_hit", type: "boolean" },
  // The limit that refused a call with 429 (server/engine/admission/quantities.ts LimitName); null
  // for every call admitted.
  rate_limit: { sql: "l.rate_limit", type: "string" },
};

const GRANULARITY_SQL: Record<GranularityName, string> = {
  hour: "date_trunc('hour', l.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
  day: "date_trunc('day', l.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
  // Weeks start on Monday, as budget weeks do.
  week: "date_trunc('week', l.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
  month: "date_trunc('month', l.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
};

/**
 * String operators compare a string dimension and `is` a boolean one, row by row; number
 * operators compare a metric's aggregated value (so they filter groups, like SQL HAVING).
 * `$` stands for the bound value.
 */
const OPERATOR_SQL: Record<OperatorName, (expr: string) => string> = {
  eq: (expr) => `${expr} = $`,
  neq: (expr) => `${expr} IS DISTINCT FROM $`,
  in: (expr) => `${expr} = ANY($::text[])`,
  not_in: (expr) => `NOT coalesce(${expr} = ANY($::text[]), false)`,
  contains: (expr) => `strpos(lower(${expr}), lower($)) > 0`,
  gt: (expr) => `(${expr})::float8 > $::float8`,
  gte: (expr) => `(${expr})::float8 >= $::float8`,
  lt: (expr) => `(${expr})::float8 < $::float8`,
  lte: (expr) => `(${expr})::float8 <= $::float8`,
  is: (expr) => `${expr} = $::boolean`,
};

const DEFAULT_DAYS = 30;
const DEFAULT_LIMIT = 1000;
const MAX_LIST_ITEMS = 1000;

const has = <K extends string>(table: Record<K, unknown>, name: string): name is K => Object.hasOwn(table, name);
const valueTypeOf = (operator: OperatorName) => OPERATORS.find((o) => o.name === operator)!.value_type;

/** A statement with positional bind parameters ($1, $2, …). */
class Statement {
  readonly bind: unknown[] = [];

  /** Binds `value` and returns `fragment` with its `$` replaced by the parameter's placeholder. */
  param(value: unknown, fragment = "$"): string {
    this.bind.push(value);
    const placeholder = `$${this.bind.length}`;
    return fragment.replace("$", () => placeholder);
  }
}

interface AnalyticsQuery {
  metrics: MetricName[];
  dimensions: DimensionName[];
  granularity: GranularityName | undefined;
  sql: string;
  bind: unknown[];
}

/** Rows of the organization's ledger as `req` asks for them; a 400 naming what is wrong in `req`. */
export async function queryLedger(
  sequelize: Sequelize,
  organizationId: string,
  req: QueryAnalyticsRequest,
  now: Date,
): Promise<JsonObject[]> {
  return runQuery(sequelize, compileQuery(organizationId, req, now));
}

/** Validates the request (400 naming what is wrong) and compiles it to one SQL statement. */
function compileQuery(organizationId: string, req: QueryAnalyticsRequest, now: Date): AnalyticsQuery {
  const metrics = unique(req.metrics).map((name) => {
    if (!has(METRIC_SQL, name))
      throw gatewayError(400, `Unknown metric '${name}' in metrics; GET /analytics/meta lists the metrics`);
    return name;
  });
  const dimensions = unique(req.dimensions).map((name) => {
    if (!has(DIMENSION_SQL, name))
      throw gatewayError(400, `Unknown dimension '${name}' in dimensions; GET /analytics/meta lists the dimensions`);
    return name;
  });
  let granularity: GranularityName | undefined;
  if (req.granularity !== "") {
    if (!has(GRANULARITY_SQL, req.granularity)) {
      throw gatewayError(
        400,
        `Unknown granularity '${req.granularity}'; use one of ${Object.keys(GRANULARITY_SQL).join(", ")}`,
      );
    }
    granularity = req.granularity;
  }
  const end = req.end ? requestDate(req.end, "end") : now;
  const start = req.start ? requestDate(req.start, "start") : new Date(end.getTime() - DEFAULT_DAYS * 86_400_000);
  if (start.getTime() >= end.getTime()) throw gatewayError(400, "start must be before end");

  const statement = new Statement();
  const where = [
    `l.organization_id = ${statement.param(organizationId, "$::uuid")}`,
    `l.created_at >= ${statement.param(start.toISOString(), "$::timestamptz")}`,
    `l.created_at < ${statement.param(end.toISOString(), "$::timestamptz")}`,
  ];
  const having: string[] = [];
  req.filters.forEach((filter, i) => {
    const { target, clause } = compileFilter(filter, `filters[${i}]`, statement);
    (target === "where" ? where : having).push(clause);
  });

  const columns: string[] = [];
  if (granularity) columns.push(`${GRANULARITY_SQL[granularity]} AS bucket`);
  dimensions.forEach((name, i) => columns.push(`${DIMENSION_SQL[name].sql} AS d${i}`));
  const groups = columns.map((_, i) => String(i + 1));
  metrics.forEach((name, i) => columns.push(`${METRIC_SQL[name]} AS m${i}`));
  // Time first, then the largest first metric, then dimension values, so a limit keeps the top rows.
  const order = [
    ...(granularity ? ["bucket"] : []),
    "m0 DESC NULLS LAST",
    ...dimensions.map((_, i) => `d${i} NULLS LAST`),
  ];
  const limit = req.limit ?? DEFAULT_LIMIT;
  const sql = [
    `SELECT ${columns.join(", ")}`,
    "FROM usage_ledger l",
    `WHERE ${where.join(" AND ")}`,
    groups.length > 0 ? `GROUP BY ${groups.join(", ")}` : "",
    having.length > 0 ? `HAVING ${having.join(" AND ")}` : "",
    `ORDER BY ${order.join(", ")}`,
    `LIMIT ${statement.param(limit, "$::integer")}`,
  ]
    .filter((part) => part !== "")
    .join("\n");
  return { metrics, dimensions, granularity, sql, bind: statement.bind };
}

function compileFilter(
  filter: AnalyticsFilter,
  field: string,
  statement: Statement,
): { target: "where" | "having"; clause: string } {
  const { operator, dimension } = filter;
  if (!has(OPERATOR_SQL, operator))
    throw gatewayError(
      400,
      `${field}.operator: unknown operator '${operator}'; GET /analytics/meta lists the operators`,
    );
  const valueType = valueTypeOf(operator);
  const value = filterValue(filter.value, valueType, `${field}.value`, operator);
  if (valueType === "number") {
    if (!has(METRIC_SQL, dimension)) {
      throw gatewayError(
        400,
        `${field}.dimension: operator '${operator}' compares a metric, ` +
          `and '${dimension}' is not one; GET /analytics/meta lists the metrics`,
      );
    }
    return { target: "having", clause: statement.param(value, OPERATOR_SQL[operator](METRIC_SQL[dimension])) };
  }
  if (!has(DIMENSION_SQL, dimension))
    throw gatewayError(
      400,
      `${field}.dimension: unknown dimension '${dimension}'; GET /analytics/meta lists the dimensions`,
    );
  const column = DIMENSION_SQL[dimension];
  if ((column.type === "boolean") !== (valueType === "boolean")) {
    throw gatewayError(
      400,
      column.type === "boolean"
        ? `${field}.operator: dimension '${dimension}' is a boolean; filter it with 'is'`
        : `${field}.operator: 'is' applies to boolean dimensions only, and '${dimension}' is a string`,
    );
  }
  return { target: "where", clause: statement.param(value, OPERATOR_SQL[operator](column.sql)) };
}

function filterValue(
  value: Value | undefined,
  type: string,
  field: string,
  operator: string,
): string | number | boolean | string[] {
  const kind = value?.kind;
  const wrong = (expected: string) => gatewayError(400, `${field} must be ${expected} for operator '${operator}'`);
  switch (type) {
    case "string":
      if (kind?.case !== "stringValue") throw wrong("a string");
      return kind.value;
    case "number":
      if (kind?.case !== "numberValue" || !Number.isFinite(kind.value)) throw wrong("a number");
      return kind.value;
    case "boolean":
      if (kind?.case !== "boolValue") throw wrong("a boolean");
      return kind.value;
    default: {
      if (kind?.case !== "listValue") throw wrong("a list of strings");
      const items = kind.value.values;
      if (items.length > MAX_LIST_ITEMS) throw gatewayError(400, `${field} may hold at most ${MAX_LIST_ITEMS} items`);
      return items.map((item, i) => {
        if (item.kind.case !== "stringValue") throw gatewayError(400, `${field}[${i}] must be a string`);
        return item.kind.value;
      });
    }
  }
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

interface ResultRow {
  bucket?: Date;
  [column: string]: unknown;
}

/** Runs a compiled query: one Struct per row, `{bucket?, <dimension>: value, <metric>: number}`. */
async function runQuery(sequelize: Sequelize, query: AnalyticsQuery): Promise<JsonObject[]> {
  const rows = await sequelize.query<ResultRow>(query.sql, { type: QueryTypes.SELECT, bind: query.bind });
  return rows.map((row) => {
    const out: JsonObject = {};
    if (query.granularity) out.bucket = isoSeconds(row.bucket!);
    query.dimensions.forEach((name, i) => (out[name] = dimensionValue(row[`d${i}`])));
    query.metrics.forEach((name, i) => (out[name] = metricValue(row[`m${i}`])));
    return out;
  });
}

function isoSeconds(date: Date): string {
  return date.toISOString().replace(".000Z", "Z");
}

function dimensionValue(value: unknown): JsonValue {
  return typeof value === "string" || typeof value === "boolean" ? value : null;
}

/** pg returns BIGINT and NUMERIC aggregates as strings; a metric without data (an average of nothing) is null. */
function metricValue(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

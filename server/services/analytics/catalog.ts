import { create } from "@bufbuild/protobuf";
import { AnalyticsMetaSchema, type AnalyticsMeta } from "../../../gen/gateway/v1/analytics_pb.js";

/**
 * What the usage ledger records (one row per upstream call, per response cache hit and per call a
 * rate limit refused with 429) and so what analytics can compute:
 * the single source for GET /analytics/meta and the queries built on the ledger.
 */
export const METRICS = [
  { name: "requests", display_label: "Requests", display_format: "number", is_rate: false },
  { name: "prompt_tokens", display_label: "Prompt tokens", display_format: "number", is_rate: false },
  { name: "completion_tokens", display_label: "Completion tokens", display_format: "number", is_rate: false },
  { name: "reasoning_tokens", display_label: "Reasoning tokens", display_format: "number", is_rate: false },
  { name: "cached_tokens", display_label: "Cached prompt tokens", display_format: "number", is_rate: false },
  {
    name: "cache_write_tokens",
    display_label: "Prompt tokens written to cache",
    display_format: "number",
    is_rate: false,
  },
  { name: "total_tokens", display_label: "Total tokens", display_format: "number", is_rate: false },
  { name: "cost_usd", display_label: "Cost", display_format: "currency", is_rate: false },
  { name: "byok_cost_usd", display_label: "BYOK cost", display_format: "currency", is_rate: false },
  { name: "cache_hits", display_label: "Response cache hits", display_format: "number", is_rate: false },
  {
    name: "cache_savings_usd",
    display_label: "Saved by the response cache",
    display_format: "currency",
    is_rate: false,
  },
  { name: "avg_latency_ms", display_label: "Average latency", display_format: "duration_ms", is_rate: false },
  { name: "p95_latency_ms", display_label: "95th percentile latency", display_format: "duration_ms", is_rate: false },
  { name: "error_rate", display_label: "Error rate", display_format: "percent", is_rate: true },
  { name: "tokens_per_second", display_label: "Throughput (tokens/s)", display_format: "number", is_rate: true },
] as const;

export const DIMENSIONS = [
  { name: "model", display_label: "Model" },
  { name: "provider", display_label: "Provider" },
  { name: "api_key", display_label: "API key" },
  { name: "workspace", display_label: "Workspace" },
  { name: "member", display_label: "Member" },
  { name: "end_user", display_label: "End user" },
  { name: "endpoint", display_label: "API endpoint" },
  { name: "status", display_label: "Status" },
  { name: "is_byok", display_label: "BYOK" },
  { name: "cache_hit", display_label: "Response cache hit" },
  { name: "rate_limit", display_label: "Rate limit (of a 429)" },
] as const;

export const GRANULARITIES = [
  { name: "hour", display_label: "Hourly" },
  { name: "day", display_label: "Daily" },
  { name: "week", display_label: "Weekly" },
  { name: "month", display_label: "Monthly" },
] as const;

export const OPERATORS = [
  { name: "eq", value_type: "string" },
  { name: "neq", value_type: "string" },
  { name: "in", value_type: "string_list" },
  { name: "not_in", value_type: "string_list" },
  { name: "contains", value_type: "string" },
  { name: "gt", value_type: "number" },
  { name: "gte", value_type: "number" },
  { name: "lt", value_type: "number" },
  { name: "lte", value_type: "number" },
  { name: "is", value_type: "boolean" },
] as const;

export function analyticsMeta(): AnalyticsMeta {
  return create(AnalyticsMetaSchema, {
    metrics: METRICS.map((m) => ({
      name: m.name,
      displayLabel: m.display_label,
      displayFormat: m.display_format,
      isRate: m.is_rate,
    })),
    dimensions: DIMENSIONS.map((d) => ({ name: d.name, displayLabel: d.display_label })),
    granularities: GRANULARITIES.map((g) => ({ name: g.name, displayLabel: g.display_label })),
    operators: OPERATORS.map((o) => ({ name: o.name, valueType: o.value_type })),
  });
}

import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Exchange, ExchangeObserver } from "../../wire/exchange.js";
import type { AdmissionObserver, GrantOutcome, GrantTrigger } from "../engine/admission/admission-observer.js";
import { LIMIT_NAMES, type Refusal } from "../engine/admission/quantities.js";
import type { KeyPoolObserver } from "../engine/key-pools/key-pools.js";
import type { ResponseCacheObserver } from "../engine/response-cache/response-cache.js";
import type { KeyHealth, KeyState } from "../engine/key-pools/key-pool.js";
import type { InferenceObserver } from "../engine/inference/inference-observer.js";
import type { CallRecord } from "../engine/usage/usage-store.js";
import type { SettlementObserver } from "../engine/usage/settlement-writer.js";
import { BATCH_ITEM_STATES, type BatchItemCounts } from "./metrics-batch-items.js";

/**
 * The gateway's Prometheus metrics: one prom-client `Registry` per gateway instance (never the
 * global one, so that several gateways in one process keep apart), fed by the observers the
 * mechanisms call (exchanges, inference attempts, admission, settlement) and by what is read at
 * scrape time (open event streams, batch items). This is the only module that knows prom-client.
 *
 * Names follow the OpenTelemetry GenAI conventions where one exists (`gen_ai_client_*`, with their
 * bucket boundaries and attribute names), `gateway_*` otherwise. Every label is bounded: route
 * templates or RPC paths, never a raw path; catalog provider slugs and model ids; never a key.
 *
 * Hot path: each label set's children are looked up in nested maps of the label values (no key
 * string built per call) and created once.
 */
export interface ScrapeSources {
  /** Event streams being written now (the facade's). */
  openStreams(): number;
  /** Batch items by state, cached briefly (metrics-batch-items.ts). */
  batchItems(): Promise<BatchItemCounts>;
  /** The keys of every provider's pool and their state, by provider (server/engine/key-pools). */
  keyHealth(): Map<string, KeyHealth[]>;
}

/** A key's state as the gauge's value. */
const KEY_STATE_VALUE: Record<KeyState, number> = { healthy: 0, cooling: 1, refused: 2 };

/** One registry's values as plain data (`getMetricsAsJSON`), which crosses a cluster's IPC channel. */
export type MetricsSnapshot = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/** A text exposition (format 0.0.4) and its content type. */
export interface Exposition {
  body: string;
  contentType: string;
}

/**
 * The exposition of several workers' snapshots as one instance's: counters and histograms summed,
 * gauges by their `aggregator` (a sum unless the metric says otherwise; the process metrics of
 * `collectDefaultMetrics` bring their own).
 */
export async function aggregateExposition(snapshots: MetricsSnapshot[]): Promise<Exposition> {
  const registry = AggregatorRegistry.aggregate(snapshots);
  return { body: await registry.metrics(), contentType: registry.contentType };
}

const GEN_AI_LABELS = ["gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model"] as const;
/** OpenTelemetry's advice for gen_ai.client.token.usage. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** OpenTelemetry's advice for gen_ai.client.operation.duration and time_to_first_chunk. */
const GEN_AI_SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** Whole exchanges: a quick GET up to a long event stream. */
const REQUEST_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** What the gateway adds: the hot-path target is a fraction of a millisecond. */
const OVERHEAD_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const FLUSH_LAG_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The route label of a request that matched no route (a 404): never its raw path. */
const UNMATCHED = "(unmatched)";

/**
 * Refusals by reason, with their status: no valid key (401), not allowed (403), no budget left
 * (402), too often (429).
 */
const REFUSALS: Record<Refusal | "unauthenticated" | "forbidden", string> = {
  unauthenticated: "401",
  forbidden: "403",
  budget: "402",
  rate_limit: "429",
  free_quota: "429",
};

type HistogramChild = Histogram.Internal<string>;
type CounterChild = Counter.Internal;

/** Children of one (protocol, method, route) of the exchange metrics. */
interface RouteSeries {
  duration: HistogramChild;
  overhead: HistogramChild;
  byStatus: Map<number, CounterChild>;
}

/** Children of one (operation, provider, model) of the GenAI metrics. */
interface GenAiSeries {
  labels: readonly [operation: string, provider: string, model: string];
  inputTokens: HistogramChild;
  outputTokens: HistogramChild;
  cost: CounterChild;
  timeToFirstChunk: HistogramChild;
  /** By `error_type` (the HTTP status of a failure; "" for success). */
  duration: Map<number, HistogramChild>;
  /** By the status the passed-over attempt failed with. */
  fallbacks: Map<number, CounterChild>;
}

export class GatewayMetrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: "gateway_requests_total",
    help: "Requests answered, by protocol, method (HTTP verb or RPC kind), route template or RPC path, and HTTP status",
    labelNames: ["protocol", "method", "route", "status"],
    registers: [this.registry],
  });
  private readonly requestDuration = new Histogram({
    name: "gateway_request_duration_seconds",
    help: "Time from a request's arrival to its last byte, by protocol, method and route",
    labelNames: ["protocol", "method", "route"],
    buckets: REQUEST_SECONDS,
    registers: [this.registry],
  });
  private readonly overhead = new Histogram({
    name: "gateway_overhead_seconds",
    help: "What the gateway added to a request: its duration less the time spent waiting on providers",
    labelNames: ["protocol", "method", "route"],
    buckets: OVERHEAD_SECONDS,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: "gateway_refusals_total",
    help: "Requests refused: unauthenticated (401), forbidden (403), budget (402), rate_limit and free_quota (429)",
    labelNames: ["reason", "status"],
    registers: [this.registry],
  });
  /** Labels are bounded: a built-in slug or `custom`, and the action; never a guardrail or the text. */
  private readonly contentFilterMatches = new Counter({
    name: "gateway_content_filter_matches_total",
    help:
      "Calls whose input a guardrail content filter matched, " +
      "by filter (built-in slug or custom) and action (block, redact, flag)",
    labelNames: ["filter", "action"],
    registers: [this.registry],
  });
  private readonly tokens = new Histogram({
    name: "gen_ai_client_token_usage",
    help: "Tokens per upstream call, by type (input, output), operation, provider and model",
    labelNames: [...GEN_AI_LABELS, "gen_ai_token_type"],
    buckets: TOKEN_BUCKETS,
    registers: [this.registry],
  });
  private readonly operationDuration = new Histogram({
    name: "gen_ai_client_operation_duration_seconds",
    help:
      "Upstream call duration, from sending the request to the end of the answer; " +
      "error_type is the HTTP status of a failure",
    labelNames: [...GEN_AI_LABELS, "error_type"],
    buckets: GEN_AI_SECONDS,
    registers: [this.registry],
  });
  private readonly timeToFirstChunk = new Histogram({
    name: "gen_ai_client_operation_time_to_first_chunk_seconds",
    help: "Streamed upstream calls: time from sending the request to the first chunk",
    labelNames: GEN_AI_LABELS,
    buckets: GEN_AI_SECONDS,
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: "gateway_cost_usd_total",
    help: "Cost of upstream calls in USD at the catalog's prices (BYOK calls included)",
    labelNames: GEN_AI_LABELS,
    registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: "gateway_fallbacks_total",
    help:
      "Upstream attempts that failed and were passed over for the next endpoint, " +
      "by the failed attempt's provider, model and status",
    labelNames: [...GEN_AI_LABELS, "error_type"],
    registers: [this.registry],
  });
  /** Labels are bounded: the limit's kind, never a key or a workspace. */
  private readonly rateLimitRefusals = new Counter({
    name: "gateway_rate_limit_refusals_total",
    help:
      "Calls admission refused with 429, by the limit that refused them: " +
      "gateway_requests (GATEWAY_RATE_LIMIT_REQUESTS), key_requests, key_tokens, " +
      "workspace_requests, workspace_tokens (svc_rate_limit), free_model_requests",
    labelNames: ["limit"],
    registers: [this.registry],
  });
  private readonly leaseGrants = new Counter({
    name: "gateway_lease_top_ups_total",
    help: "Admission lease grant round trips: background top-ups and on-demand grants for a call, by outcome",
    labelNames: ["trigger", "outcome"],
    registers: [this.registry],
  });
  private readonly cacheLookups = new Counter({
    name: "gateway_response_cache_lookups_total",
    help: "Response cache lookups of calls that asked for the cache (x-gateway-cache-ttl), by outcome: hit, miss",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  private readonly cacheStoredBytes = new Counter({
    name: "gateway_response_cache_stored_bytes_total",
    help: "Bytes of answers this instance stored in the response cache",
    registers: [this.registry],
  });
  private readonly cacheBytes = new Gauge({
    name: "gateway_response_cache_bytes",
    help: "Bytes of answers the response cache holds in PostgreSQL, as of this instance's last sweep",
    registers: [this.registry],
    // Every instance reads the same table.
    aggregator: "first",
  });
  private readonly keyFailures = new Counter({
    name: "gateway_provider_key_failures_total",
    help:
      "Failed calls on a key of a provider's pool, by provider, key (its position, key-<n>) " +
      "and verdict: cooldown, refused, forbidden (a 403, counted against the key), unhealthy",
    labelNames: ["provider", "key", "verdict"],
    registers: [this.registry],
  });
  private readonly flushLag = new Histogram({
    name: "gateway_settlement_flush_lag_seconds",
    help: "Time from a call's settlement being queued to its group commit",
    buckets: FLUSH_LAG_SECONDS,
    registers: [this.registry],
  });

  private readonly routes = new Map<string, Map<string, Map<string, RouteSeries>>>();
  private readonly genAi = new Map<string, Map<string, Map<string, GenAiSeries>>>();
  private readonly refusalChildren: Record<keyof typeof REFUSALS, CounterChild>;
  private readonly grantChildren: Record<GrantTrigger, Record<GrantOutcome, CounterChild>>;

  /** Exchanges (wire/exchange.ts): requests, their latency and overhead, 401/403 refusals. */
  readonly observeExchange: ExchangeObserver = (exchange) => this.exchange(exchange);
  readonly inference: InferenceObserver = {
    attemptRecorded: (record, fellBack) => this.attempt(record, fellBack),
    // Rare (only calls a filter matched), so the child is looked up each time.
    contentFiltered: (filter, action) => this.contentFilterMatches.labels(filter, action).inc(),
  };
  readonly admission: AdmissionObserver = {
    refused: (refusal) => this.refusalChildren[refusal].inc(),
    // Rare (a limit reached), so the child is looked up each time.
    refusedBy: (limit) => this.rateLimitRefusals.labels(limit).inc(),
    leaseGrant: (trigger, outcome) => this.grantChildren[trigger][outcome].inc(),
  };
  readonly responseCache: ResponseCacheObserver = {
    looked: (outcome) => this.cacheLookups.labels(outcome).inc(),
    stored: (bytes) => this.cacheStoredBytes.inc(bytes),
    swept: (bytes) => this.cacheBytes.set(bytes),
  };
  readonly keyPools: KeyPoolObserver = {
    keyFailed: (provider, key, verdict) => this.keyFailures.labels(provider, key, verdict).inc(),
  };
  readonly settlement: SettlementObserver = {
    committed: (waitedMs) => this.flushLag.observe(Math.max(0, waitedMs) / 1000),
  };

  constructor(sources: ScrapeSources) {
    // The registry is this instance's own, made with it: the process metrics are registered on it exactly once.
    collectDefaultMetrics({ register: this.registry });
    this.refusalChildren = {
      unauthenticated: this.refusals.labels("unauthenticated", REFUSALS.unauthenticated),
      forbidden: this.refusals.labels("forbidden", REFUSALS.forbidden),
      budget: this.refusals.labels("budget", REFUSALS.budget),
      rate_limit: this.refusals.labels("rate_limit", REFUSALS.rate_limit),
      free_quota: this.refusals.labels("free_quota", REFUSALS.free_quota),
    };
    const grants = (trigger: GrantTrigger) => ({
      granted: this.leaseGrants.labels(trigger, "granted"),
      refused: this.leaseGrants.labels(trigger, "refused"),
      failed: this.leaseGrants.labels(trigger, "failed"),
    });
    this.grantChildren = { background: grants("background"), on_demand: grants("on_demand") };
    // Known series start at 0, so that rate() and absence alerts see them before the first event.
    for (const child of Object.values(this.refusalChildren)) child.inc(0);
    for (const limit of LIMIT_NAMES) this.rateLimitRefusals.labels(limit).inc(0);
    for (const byOutcome of Object.values(this.grantChildren))
      for (const child of Object.values(byOutcome)) child.inc(0);
    for (const outcome of ["hit", "miss"]) this.cacheLookups.labels(outcome).inc(0);
    new Gauge({
      name: "gateway_open_sse_streams",
      help: "Server-sent event streams this instance is writing now",
      registers: [this.registry],
      collect() {
        this.set(sources.openStreams());
      },
    });
    new Gauge({
      name: "gateway_provider_key_state",
      help:
        "The state of each key of a provider's pool: 0 healthy, 1 cooling down after a rate limit, " +
        "2 refused by the provider (out until a probe succeeds)",
      labelNames: ["provider", "key"],
      registers: [this.registry],
      // The instances share verdicts, so the worst is what a cluster's key is.
      aggregator: "max",
      collect() {
        for (const [provider, keys] of sources.keyHealth())
          for (const key of keys) this.set({ provider, key: key.label }, KEY_STATE_VALUE[key.state]);
      },
    });
    new Gauge({
      name: "gateway_batch_items",
      help:
        "Items of the batches still running (all instances: read from the database), " +
        "by state: pending, running, succeeded, failed",
      labelNames: ["state"],
      registers: [this.registry],
      // Every worker of a cluster reads the same database: their sum would count each item once per worker.
      aggregator: "first",
      async collect() {
        const counts = await sources.batchItems();
        for (const state of BATCH_ITEM_STATES) this.set({ state }, counts[state]);
      },
    });
  }

  /** The exposition (text format 0.0.4) and its content type. */
  async scrape(): Promise<Exposition> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  /** This instance's values, for a cluster's scrape to add to the other workers' (`aggregateExposition`). */
  snapshot(): Promise<MetricsSnapshot> {
    return this.registry.getMetricsAsJSON();
  }

  private exchange({ protocol, method, route, status, durationMs, upstreamMs }: Exchange): void {
    const template = route ?? UNMATCHED;
    const series = this.routeSeries(protocol, method, template);
    let requests = series.byStatus.get(status);
    if (!requests) {
      requests = this.requests.labels(protocol, method, template, String(status));
      series.byStatus.set(status, requests);
    }
    requests.inc();
    series.duration.observe(durationMs / 1000);
    series.overhead.observe(Math.max(0, durationMs - upstreamMs) / 1000);
    // Only the gateway answers 401 and 403 (a provider's 401/402/403 reaches the caller as 502:
    // engine/inference/upstream-errors.ts), so the status alone says it; 402 and 429 are counted by
    // admission, since a provider's 429 is passed on as 429.
    if (status === 401) this.refusalChildren.unauthenticated.inc();
    else if (status === 403) this.refusalChildren.forbidden.inc();
  }

  private attempt(record: CallRecord, fellBack: boolean): void {
    const series = this.genAiSeries(record.api, record.providerSlug ?? "unknown", record.modelId);
    if (record.promptTokens > 0) series.inputTokens.observe(record.promptTokens);
    if (record.completionTokens > 0) series.outputTokens.observe(record.completionTokens);
    const cost = Number(record.costUsd);
    if (cost > 0 && Number.isFinite(cost)) series.cost.inc(cost);
    const failed = record.status !== "success";
    if (record.generationMs !== null) {
      const errorType = failed ? record.httpStatus : 0;
      let duration = series.duration.get(errorType);
      if (!duration) {
        duration = this.operationDuration.labels(...series.labels, errorType === 0 ? "" : String(errorType));
        series.duration.set(errorType, duration);
      }
      duration.observe(record.generationMs / 1000);
    }
    // A streamed answer's latency is the wait for its first chunk (inference-call.ts, Served).
    if (record.streamed && !failed && record.latencyMs !== null)
      series.timeToFirstChunk.observe(record.latencyMs / 1000);
    if (fellBack) {
      let fallbacks = series.fallbacks.get(record.httpStatus);
      if (!fallbacks) {
        fallbacks = this.fallbacks.labels(...series.labels, String(record.httpStatus));
        series.fallbacks.set(record.httpStatus, fallbacks);
      }
      fallbacks.inc();
    }
  }

  private routeSeries(protocol: string, method: string, route: string): RouteSeries {
    const byMethod = nested(nested(this.routes, protocol), method);
    let series = byMethod.get(route);
    if (!series) {
      series = {
        duration: this.requestDuration.labels(protocol, method, route),
        overhead: this.overhead.labels(protocol, method, route),
        byStatus: new Map(),
      };
      byMethod.set(route, series);
    }
    return series;
  }

  private genAiSeries(operation: string, provider: string, model: string): GenAiSeries {
    const byModel = nested(nested(this.genAi, operation), provider);
    let series = byModel.get(model);
    if (!series) {
      series = {
        labels: [operation, provider, model],
        inputTokens: this.tokens.labels(operation, provider, model, "input"),
        outputTokens: this.tokens.labels(operation, provider, model, "output"),
        cost: this.cost.labels(operation, provider, model),
        timeToFirstChunk: this.timeToFirstChunk.labels(operation, provider, model),
        duration: new Map(),
        fallbacks: new Map(),
      };
      byModel.set(model, series);
    }
    return series;
  }
}

/** The map under `key`, made on first use. */
function nested<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let inner = map.get(key);
  if (!inner) {
    inner = new Map();
    map.set(key, inner);
  }
  return inner;
}

import path from "node:path";
import type { InternRuntimeConfig } from "../../wire/host-protocol.js";
import { internRuntimeConfig } from "./config-interns.js";
import { type ListenerLimits, listenerLimits, workersVar } from "./config-listeners.js";
import { type StorageConfig, storageConfig } from "./config-storage.js";
import { type TracingConfig, tracingConfig } from "./config-tracing.js";
import { boolVar, type Env, intVar, listVar, nonEmpty, renamedVars } from "./config-vars.js";
import { LOG_FORMATS, type LogFormat } from "./logger.js";

/**
 * Everything the gateway reads from its environment (12-factor); documented in
 * docs/configuration.md (checked by test/architecture).
 */
export interface GatewayConfig {
  /** Old setting names read this start, each with what to rename it to (logged as warnings). */
  deprecations: string[];
  /** REST facade, Connect and gRPC-Web (HTTP/1.1). */
  port: number;
  /** gRPC over h2c (and Connect over HTTP/2). */
  grpcPort: number;
  /** GATEWAY_GRPC_REFLECTION: gRPC server reflection on the core's ports, so buf curl and grpcurl need no protos. */
  grpcReflection: boolean;
  host: string;
  /** Embedded Postgres data and other local state. */
  dataDir: string;
  /** Where the bytes of uploaded files are kept (server/platform/storage). */
  storage: StorageConfig;
  /** External Postgres; when unset an embedded one is started under `dataDir`. */
  databaseUrl: string | undefined;
  /** Port of the embedded Postgres; 0 picks a free one at each start. */
  embeddedPostgresPort: number;
  /** Secret of the first management key; when unset a random one is generated and printed once. */
  bootstrapKey: string | undefined;
  /** Entitlements (stored names) the first organization of a fresh install starts with. */
  bootstrapEntitlements: string[];
  /**
   * Email of the owner member the gateway creates for an organization without one: the first
   * organization at the first start, organizations the operator creates without `--owner-email`,
   * and every organization an upgrade finds without an owner (migration 0017).
   */
  ownerEmail: string;
  logLevel: string;
  /** GATEWAY_LOG_FORMAT: json or pretty; unset, pretty on a terminal and JSON otherwise (server/platform/logger.ts). */
  logFormat: LogFormat | undefined;
  /** Idle time after which an SSE stream gets a `: keepalive` comment. */
  sseKeepaliveMs: number;
  /** How often the governance change feed checks that its connection still answers (and how long it waits). */
  governanceFeedCheckMs: number;
  /** Daily quota of free-model requests per key, reported as `free_model_daily_requests`. */
  freeModelDailyRequests: number;
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownGraceMs: number;
  /**
   * GATEWAY_WORKERS: gateway processes sharing the two ports (node:cluster,
   * server/app/cluster-primary.ts); 1: this process alone.
   */
  workers: number;
  /** Operator token of OperatorService (`npm run admin`); when unset, kept in `dataDir/operator.token`. */
  operatorToken: string | undefined;
  /**
   * GATEWAY_METRICS_TOKEN: when set, GET /metrics wants `Authorization: Bearer <it>`; unset, the
   * metrics are public.
   */
  metricsToken: string | undefined;
  /** 32-byte master key (64 hex characters) sealing stored credentials; when unset, kept in `dataDir/master.key`. */
  masterKey: string | undefined;
  /**
   * Hosts a private endpoint may use although they resolve to loopback, private, link-local or
   * metadata addresses (e.g. an on-premises deployment). Exact hostnames or IP literals.
   */
  privateEndpointAllowedHosts: string[];
  /** PEM file of extra CA certificates trusted for private endpoints (an internal CA). */
  privateEndpointCaFile: string | undefined;
  /** Time limit of a private endpoint validation request. */
  privateEndpointTimeoutMs: number;
  /**
   * The largest answer read whole from a private endpoint (a tenant's base_url), in bytes: below
   * the operator's providers' 256 MiB, so a few parallel calls cannot take the process's memory.
   */
  privateEndpointMaxAnswerBytes: number;
  /** GATEWAY_CONFIG: JSON or YAML file of providers, models and regional hostnames; none = empty catalog. */
  catalogFile: string | undefined;
  /** Requests per key per rate-limit window; 0 turns the limit off. */
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  /**
   * GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS: the window the per-minute limits of keys and
   * workspaces (`svc_rate_limit`) are counted in, each scaled to it (docs/api/limits.md).
   */
  rateLimitMinuteWindowSeconds: number;
  /** Time allowed for one inference call end to end, fallbacks included (504 after it). */
  requestTimeoutMs: number;
  /**
   * GATEWAY_CONTENT_FILTER_MAX_BYTES: the text each content filter reads for one call at most; more
   * is 413 (server/engine/content-filters/filter-budget.ts).
   */
  contentFilterMaxBytes: number;
  /**
   * GATEWAY_KEY_COOLDOWN_MAX_SECONDS: the longest a key of a provider's pool rests after a 429,
   * whatever Retry-After or another instance says (server/engine/key-pools).
   */
  keyCooldownMaxSeconds: number;
  /** GATEWAY_VAULT_WRITES_DISABLED: vault writes answer 503 (reads still work), e.g. during a key rotation. */
  vaultWritesDisabled: boolean;
  /** How long `GET /interns/{id}/daemon` waits for the intern's host before answering 408 (10 s by default). */
  internDaemonTimeoutMs: number;
  internRuntime: InternRuntimeConfig;
  batch: BatchRunnerConfig;
  /** Admission from leases (server/engine/admission/lease-book.ts). */
  leases: LeaseConfig;
  /** Settlement written behind (server/engine/usage/settlement-writer.ts). */
  settlement: SettlementConfig;
  /** The response cache (server/engine/response-cache). */
  cache: ResponseCacheConfig;
  video: VideoPollerConfig;
  /** OpenTelemetry traces (server/platform/observability/tracing.ts): off unless an OTLP endpoint is set. */
  tracing: TracingConfig;
  /** What the two listeners allow a connection (server/app/server-limits.ts). */
  listeners: ListenerLimits;
}

/** The video job poller of this instance (server/services/videos/video-poller.ts). */
export interface VideoPollerConfig {
  /**
   * How often the poller looks for due jobs, and the least time between two polls of one job at its
   * provider; 0 = no loop.
   */
  pollMs: number;
  /** Jobs this instance advances at once. */
  concurrency: number;
  /** A claimed job is this instance's for so long; it renews the lease while it works on the job. */
  leaseSeconds: number;
  /**
   * First wait after the provider could not be reached; doubled per failure (at most 5 minutes), or
   * its Retry-After.
   */
  retryBaseMs: number;
  /** A job not finished this long after its submission is `expired`. */
  deadlineSeconds: number;
  /** How long the stored outputs of a completed job are kept (its `expires_at`). */
  retentionSeconds: number;
}

/** How this instance leases slices of every limit (docs/architecture.md). */
export interface LeaseConfig {
  /** How long a grant is usable; renewed while in use. */
  leaseMs: number;
  /** Background top-up and renewal period. */
  topUpMs: number;
  /** A slice covers this long of the recent demand (at least four calls). */
  horizonMs: number;
  /** A lease unused this long gives its slice back. */
  idleMs: number;
}

/** The response cache (server/engine/response-cache/): its TTLs, its sizes and its sweep. */
export interface ResponseCacheConfig {
  /** The longest TTL a request (`x-gateway-cache-ttl`) may ask for. */
  maxTtlSeconds: number;
  /**
   * Bytes of answers kept in PostgreSQL, over all workspaces; past it the oldest of the workspaces
   * above their fair share go first.
   */
  maxBytes: number;
  /** Bytes of answers this instance keeps in memory in front of PostgreSQL. */
  memoryBytes: number;
  /** The largest answer stored (its JSON, in bytes); a larger one is served but not cached. */
  maxEntryBytes: number;
  /** How often a leased worker deletes expired entries and enforces maxBytes. */
  sweepMs: number;
}

/** Group commits of answered calls (ledger rows, counters, lease consumption). */
export interface SettlementConfig {
  flushMs: number;
  flushRows: number;
  /** Calls queued or in flight at most while the database cannot be reached (503 beyond). */
  capacity: number;
}

/** The batch runner of this instance (server/services/batches/batch-runner.ts). */
export interface BatchRunnerConfig {
  /** Items this instance runs at once, over all batches and providers. */
  concurrency: number;
  /** Items this instance runs at once against one provider. */
  providerConcurrency: number;
  /** A claimed item is this instance's for so long; it renews the lease while the item runs. */
  leaseSeconds: number;
  /** Tries per item before a retryable failure becomes its result. */
  maxAttempts: number;
  /** First retry delay; doubled per try, or the provider's Retry-After when longer. */
  retryBaseMs: number;
  /** How often an idle runner looks for work, expired batches and results to purge. */
  pollMs: number;
  /** How often a batch running on a provider's own batch API is polled there. */
  nativePollMs: number;
}

export function loadConfig(env: Env = process.env): GatewayConfig {
  const deprecations: string[] = [];
  const dataDir = path.resolve(env.GATEWAY_DATA_DIR ?? ".data");
  const shellTimeoutMs = intVar(env, "GATEWAY_INTERN_SHELL_TIMEOUT_MS", 60_000, 100, 3_600_000);
  const renamedVar = renamedVars(env, deprecations);
  return {
    deprecations,
    port: intVar(env, "PORT", 8080, 0, 65535),
    grpcPort: intVar(env, "GRPC_PORT", 50051, 0, 65535),
    grpcReflection: boolVar(env, "GATEWAY_GRPC_REFLECTION", true),
    host: env.HOST ?? "0.0.0.0",
    dataDir,
    storage: storageConfig(env, dataDir),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    embeddedPostgresPort: intVar(env, "GATEWAY_PG_PORT", 0, 0, 65535),
    bootstrapKey: nonEmpty(env.GATEWAY_BOOTSTRAP_KEY),
    bootstrapEntitlements: entitlementsVar(env, "GATEWAY_BOOTSTRAP_ENTITLEMENTS"),
    ownerEmail: ownerEmailOf(env),
    logLevel: env.LOG_LEVEL ?? "info",
    logFormat: logFormatVar(env),
    sseKeepaliveMs: intVar(env, "GATEWAY_SSE_KEEPALIVE_MS", 30_000, 10, 3_600_000),
    governanceFeedCheckMs: intVar(env, "GATEWAY_GOVERNANCE_FEED_CHECK_MS", 5_000, 50, 600_000),
    freeModelDailyRequests: intVar(env, "GATEWAY_FREE_MODEL_DAILY_REQUESTS", 50, 0, 1_000_000),
    shutdownGraceMs: intVar(env, "GATEWAY_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    workers: workersVar(env),
    operatorToken: nonEmpty(env.GATEWAY_OPERATOR_TOKEN),
    metricsToken: nonEmpty(env.GATEWAY_METRICS_TOKEN),
    masterKey: nonEmpty(env.GATEWAY_MASTER_KEY),
    privateEndpointAllowedHosts: listVar(env, "GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS"),
    privateEndpointCaFile: nonEmpty(env.GATEWAY_PRIVATE_ENDPOINT_CA_FILE),
    privateEndpointTimeoutMs: intVar(env, "GATEWAY_PRIVATE_ENDPOINT_TIMEOUT_MS", 10_000, 100, 120_000),
    privateEndpointMaxAnswerBytes: intVar(env, "GATEWAY_PRIVATE_ENDPOINT_MAX_ANSWER_MIB", 32, 1, 256) * 1024 * 1024,
    catalogFile: nonEmpty(env.GATEWAY_CONFIG),
    rateLimitRequests: intVar(env, "GATEWAY_RATE_LIMIT_REQUESTS", 600, 0, 100_000_000),
    rateLimitWindowSeconds: intVar(env, "GATEWAY_RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
    rateLimitMinuteWindowSeconds: intVar(env, "GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS", 60, 1, 60),
    requestTimeoutMs: intVar(env, "GATEWAY_REQUEST_TIMEOUT_MS", 600_000, 100, 3_600_000),
    contentFilterMaxBytes: intVar(env, "GATEWAY_CONTENT_FILTER_MAX_BYTES", 4 * 1024 * 1024, 1_024, 1024 * 1024 * 1024),
    keyCooldownMaxSeconds: intVar(env, "GATEWAY_KEY_COOLDOWN_MAX_SECONDS", 900, 1, 86_400),
    vaultWritesDisabled: boolVar(env, "GATEWAY_VAULT_WRITES_DISABLED", false),
    internDaemonTimeoutMs: intVar(env, "GATEWAY_INTERN_DAEMON_TIMEOUT_MS", 10_000, 10, 600_000),
    internRuntime: internRuntimeConfig(env, dataDir, shellTimeoutMs, renamedVar),
    batch: {
      concurrency: intVar(env, "GATEWAY_BATCH_CONCURRENCY", 64, 0, 10_000),
      providerConcurrency: intVar(env, "GATEWAY_BATCH_PROVIDER_CONCURRENCY", 32, 1, 10_000),
      leaseSeconds: renamedVar("GATEWAY_BATCH_LEASE_MS", 30_000, 1_000, 3_600_000) / 1000,
      maxAttempts: intVar(env, "GATEWAY_BATCH_MAX_ATTEMPTS", 5, 1, 100),
      retryBaseMs: intVar(env, "GATEWAY_BATCH_RETRY_BASE_MS", 1_000, 1, 600_000),
      pollMs: intVar(env, "GATEWAY_BATCH_POLL_MS", 250, 5, 60_000),
      nativePollMs: intVar(env, "GATEWAY_BATCH_NATIVE_POLL_MS", 30_000, 5, 3_600_000),
    },
    leases: {
      leaseMs: intVar(env, "GATEWAY_LEASE_TTL_MS", 30_000, 1_000, 3_600_000),
      topUpMs: intVar(env, "GATEWAY_LEASE_TOPUP_MS", 100, 5, 60_000),
      horizonMs: intVar(env, "GATEWAY_LEASE_HORIZON_MS", 1_000, 10, 600_000),
      idleMs: intVar(env, "GATEWAY_LEASE_IDLE_MS", 10_000, 10, 3_600_000),
    },
    cache: {
      maxTtlSeconds: intVar(env, "GATEWAY_CACHE_MAX_TTL_SECONDS", 86_400, 1, 31_536_000),
      maxBytes: intVar(env, "GATEWAY_CACHE_MAX_BYTES", 1024 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
      memoryBytes: intVar(env, "GATEWAY_CACHE_MEMORY_BYTES", 64 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
      maxEntryBytes: intVar(env, "GATEWAY_CACHE_MAX_ENTRY_BYTES", 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
      sweepMs: intVar(env, "GATEWAY_CACHE_SWEEP_MS", 60_000, 100, 86_400_000),
    },
    settlement: {
      flushMs: intVar(env, "GATEWAY_SETTLEMENT_FLUSH_MS", 5, 1, 60_000),
      flushRows: intVar(env, "GATEWAY_SETTLEMENT_FLUSH_ROWS", 256, 1, 10_000),
      capacity: intVar(env, "GATEWAY_SETTLEMENT_CAPACITY", 20_000, 1, 10_000_000),
    },
    video: {
      pollMs: intVar(env, "GATEWAY_VIDEO_POLL_MS", 5_000, 0, 3_600_000),
      concurrency: intVar(env, "GATEWAY_VIDEO_CONCURRENCY", 8, 1, 1_000),
      leaseSeconds: renamedVar("GATEWAY_VIDEO_LEASE_MS", 60_000, 1_000, 3_600_000) / 1000,
      retryBaseMs: intVar(env, "GATEWAY_VIDEO_RETRY_BASE_MS", 5_000, 0, 600_000),
      deadlineSeconds: intVar(env, "GATEWAY_VIDEO_DEADLINE_SECONDS", 86_400, 60, 2_592_000),
      retentionSeconds: intVar(env, "GATEWAY_VIDEO_RETENTION_SECONDS", 604_800, 60, 31_536_000),
    },
    tracing: tracingConfig(env),
    listeners: listenerLimits(env),
  };
}

/** GATEWAY_OWNER_EMAIL, checked as a member's email is (members.proto); `owner@localhost` when unset. */
export function ownerEmailOf(env: Env = process.env): string {
  const email = nonEmpty(env.GATEWAY_OWNER_EMAIL) ?? "owner@localhost";
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
    throw new Error(`GATEWAY_OWNER_EMAIL must be an email address, got "${email}"`);
  return email;
}

const ENTITLEMENTS: Record<string, string> = {
  interns: "interns",
  "private-endpoints": "private_endpoints",
  private_endpoints: "private_endpoints",
};

/** A comma list of `interns` and `private-endpoints`, or `none`; unset: both. */
function entitlementsVar(env: Env, name: string): string[] {
  const items = listVar(env, name);
  if (items.length === 0) return ["interns", "private_endpoints"];
  if (items.length === 1 && items[0] === "none") return [];
  return [
    ...new Set(
      items.map((item) => {
        const entitlement = ENTITLEMENTS[item];
        if (!entitlement)
          throw new Error(`${name} must be a comma list of interns and private-endpoints, or none; got "${item}"`);
        return entitlement;
      }),
    ),
  ];
}

function logFormatVar(env: Env): LogFormat | undefined {
  const raw = nonEmpty(env.GATEWAY_LOG_FORMAT);
  if (raw === undefined) return undefined;
  const format = LOG_FORMATS.find((name) => name === raw);
  if (format === undefined) throw new Error(`GATEWAY_LOG_FORMAT must be ${LOG_FORMATS.join(" or ")}, got "${raw}"`);
  return format;
}

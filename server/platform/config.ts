import os from "node:os";
import path from "node:path";
import type { InternRuntimeConfig, ShellLimits } from "../../wire/host-protocol.js";
import { LOG_FORMATS, type LogFormat } from "./logger.js";

/** Everything the gateway reads from its environment (12-factor); documented in docs/configuration.md (checked by test/architecture). */
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
  /** GATEWAY_WORKERS: gateway processes sharing the two ports (node:cluster, server/app/cluster-primary.ts); 1: this process alone. */
  workers: number;
  /** Operator token of OperatorService (`npm run admin`); when unset, kept in `dataDir/operator.token`. */
  operatorToken: string | undefined;
  /** GATEWAY_METRICS_TOKEN: when set, GET /metrics wants `Authorization: Bearer <it>`; unset, the metrics are public. */
  metricsToken: string | undefined;
  /** 32-byte master key (64 hex characters) sealing stored credentials; when unset, kept in `dataDir/master.key`. */
  masterKey: string | undefined;
  /**
   * Hosts a private endpoint may use although they resolve to loopback, private, link-local or
   * metadata addresses (e.g. an on-premises deployment). Exact host names or IP literals.
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
  /** GATEWAY_CONFIG: JSON or YAML file of providers, models and regional hosts; none = empty catalog. */
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
  /** GATEWAY_CONTENT_FILTER_MAX_BYTES: the text each content filter reads for one call at most; more is 413 (server/engine/content-filters/filter-budget.ts). */
  contentFilterMaxBytes: number;
  /** GATEWAY_KEY_COOLDOWN_MAX_SECONDS: the longest a key of a provider's pool rests after a 429, whatever Retry-After or another instance says (server/engine/key-pools). */
  keyCooldownMaxSeconds: number;
  /** GATEWAY_VAULT_WRITES_DISABLED: vault writes answer 503 (reads still work), e.g. during a key rotation. */
  vaultWritesDisabled: boolean;
  /** How long `GET /interns/{id}/daemon` waits for the intern's host before answering 408 (10 s by default). */
  internDaemonTimeoutMs: number;
  internRuntime: InternRuntimeConfig;
  batch: BatchEngineConfig;
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

/** Time, connection and stream limits of the HTTP port (HTTP/1.1) and the gRPC port (h2c). */
export interface ListenerLimits {
  /** HTTP port: a request's head must be in this long after its first byte (or after the connection opened), else 408 and closed. */
  headersTimeoutMs: number;
  /** HTTP port: a request must be received whole (head and body) this long after its first byte; 0 = no limit. The answer is not timed. */
  requestTimeoutMs: number;
  /** HTTP port: a connection idle between requests is closed after this long. */
  keepAliveTimeoutMs: number;
  /** Open connections each port accepts at most; more are closed at once. */
  maxConnections: number;
  /** gRPC port: streams one HTTP/2 connection may have open at once; more are refused (REFUSED_STREAM). */
  maxConcurrentStreams: number;
  /** gRPC port: memory one HTTP/2 connection may hold, in MiB; past it, new streams are refused. */
  sessionMemoryMiB: number;
  /** gRPC port: a connection without an open stream this long is closed (GOAWAY); 0 = never. */
  idleSessionMs: number;
}

/** The video job poller of this instance (server/services/videos/video-poller.ts). */
export interface VideoPollerConfig {
  /** How often the poller looks for due jobs, and the least time between two polls of one job at its provider; 0 = no loop. */
  pollMs: number;
  /** Jobs this instance advances at once. */
  concurrency: number;
  /** A claimed job is this instance's for so long; it renews the lease while it works on the job. */
  leaseSeconds: number;
  /** First wait after the provider could not be reached; doubled per failure (at most 5 minutes), or its Retry-After. */
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

/** Group commits of answered calls (ledger rows, counters, lease consumption). */
export interface ResponseCacheConfig {
  /** The longest TTL a request (`x-gateway-cache-ttl`) may ask for. */
  maxTtlSeconds: number;
  /** Bytes of answers kept in PostgreSQL, over all workspaces; past it the oldest of the workspaces above their fair share go first. */
  maxBytes: number;
  /** Bytes of answers this instance keeps in memory in front of PostgreSQL. */
  memoryBytes: number;
  /** The largest answer stored (its JSON, in bytes); a larger one is served but not cached. */
  maxEntryBytes: number;
  /** How often a leased worker deletes expired entries and enforces maxBytes. */
  sweepMs: number;
}

export interface SettlementConfig {
  flushMs: number;
  flushRows: number;
  /** Calls queued or in flight at most while the database cannot be reached (503 beyond). */
  capacity: number;
}

/** The batch engine of this instance (server/services/batches/batch-engine.ts). */
export interface BatchEngineConfig {
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
  /** How often an idle engine looks for work, expired batches and results to purge. */
  pollMs: number;
  /** How often a batch running on a provider's own batch API is polled there. */
  nativePollMs: number;
}

/**
 * A directory (GATEWAY_FILES_DIR, default `<dataDir>/files`), or an S3-compatible bucket once
 * GATEWAY_S3_BUCKET is set. Without an access key pair the AWS SDK's own credential chain applies.
 */
export type StorageConfig =
  | { kind: "local"; dir: string }
  | {
      kind: "s3";
      bucket: string;
      /** Prepended to every object key, e.g. `gateway/`. */
      prefix: string;
      region: string;
      /** An S3-compatible service (MinIO, R2, …); unset means AWS. */
      endpoint: string | undefined;
      forcePathStyle: boolean;
      /** Never logged. */
      credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    };

/** The OpenTelemetry SDK's standard variables this gateway reads itself; the SDK reads its others (headers, sampler) as usual. */
export interface TracingConfig {
  /** Where spans are sent (OTLP over HTTP, JSON); undefined: tracing off, the SDK is not even loaded. */
  tracesUrl: string | undefined;
  /** OTEL_SERVICE_NAME, default `model-gateway`. */
  serviceName: string;
}

type Env = Record<string, string | undefined>;

/**
 * Settings renamed when the names were settled: one spelling per unit (`_MS`,
 * `_SECONDS`) and every lease in milliseconds. An old name is still read for one release, with a
 * warning at start (`deprecations`); the new name wins when both are set.
 */
const RENAMED = {
  GATEWAY_INTERN_INTERACTION_TIMEOUT_SECONDS: { old: "GATEWAY_INTERN_INTERACTION_TIMEOUT_S", factor: 1 },
  GATEWAY_INTERN_RUN_TIMEOUT_SECONDS: { old: "GATEWAY_INTERN_RUN_TIMEOUT_S", factor: 1 },
  GATEWAY_BATCH_LEASE_MS: { old: "GATEWAY_BATCH_LEASE_SECONDS", factor: 1000 },
  GATEWAY_VIDEO_LEASE_MS: { old: "GATEWAY_VIDEO_LEASE_SECONDS", factor: 1000 },
} as const;

export function loadConfig(env: Env = process.env): GatewayConfig {
  const internHostListen = nonEmpty(env.GATEWAY_INTERN_HOST_LISTEN) ?? "127.0.0.1";
  const deprecations: string[] = [];
  const dataDir = path.resolve(env.GATEWAY_DATA_DIR ?? ".data");
  const shellTimeoutMs = intVar(env, "GATEWAY_INTERN_SHELL_TIMEOUT_MS", 60_000, 100, 3_600_000);
  /** A renamed setting: its new name, else its old one converted to the new unit. */
  const renamedVar = (name: keyof typeof RENAMED, fallback: number, min: number, max: number): number => {
    const { old, factor } = RENAMED[name];
    if (nonEmpty(env[name]) !== undefined || nonEmpty(env[old]) === undefined) return intVar(env, name, fallback, min, max);
    deprecations.push(`${old} is renamed ${name}${factor === 1 ? "" : ` (milliseconds)`}; the old name is read until the next release`);
    return intVar({ [name]: String(intVar(env, old, fallback / factor, 0, Number.MAX_SAFE_INTEGER) * factor) }, name, fallback, min, max);
  };
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
    internRuntime: {
      interactionTimeoutSeconds: renamedVar("GATEWAY_INTERN_INTERACTION_TIMEOUT_SECONDS", 300, 1, 86_400),
      runTimeoutSeconds: renamedVar("GATEWAY_INTERN_RUN_TIMEOUT_SECONDS", 3_600, 1, 604_800),
      hostTimeoutMs: intVar(env, "GATEWAY_INTERN_HOST_TIMEOUT_MS", 10_000, 50, 600_000),
      hostStartTimeoutMs: intVar(env, "GATEWAY_INTERN_HOST_START_TIMEOUT_MS", 30_000, 1_000, 600_000),
      leaseMs: intVar(env, "GATEWAY_INTERN_LEASE_MS", 30_000, 300, 3_600_000),
      maxOpenRuns: intVar(env, "GATEWAY_INTERN_MAX_OPEN_RUNS", 8, 1, 100_000),
      turnsPerMinute: intVar(env, "GATEWAY_INTERN_TURNS_PER_MINUTE", 60, 0, 1_000_000),
      replayBytes: intVar(env, "GATEWAY_INTERN_REPLAY_BYTES", 1_048_576, 256, 1_073_741_824),
      maxSteps: intVar(env, "GATEWAY_INTERN_MAX_STEPS", 50, 1, 10_000),
      shellTimeoutMs,
      shellOutputBytes: intVar(env, "GATEWAY_INTERN_SHELL_OUTPUT_BYTES", 65_536, 256, 16_777_216),
      shellUidBase: intVar(env, "GATEWAY_INTERN_SHELL_UID_BASE", 100_000, 0, 2_000_000_000),
      shellLimits: shellLimits(env, shellTimeoutMs),
      homeDir: internHomeDirVar(env, dataDir),
      maxRunningPerOrg: intVar(env, "GATEWAY_INTERN_MAX_RUNNING_PER_ORG", 10, 0, 1_000_000),
      maxRunningPerInstance: intVar(env, "GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE", 32, 0, 1_000_000),
      fetchTimeoutMs: intVar(env, "GATEWAY_INTERN_FETCH_TIMEOUT_MS", 30_000, 100, 600_000),
      fetchBodyBytes: intVar(env, "GATEWAY_INTERN_FETCH_BODY_BYTES", 262_144, 256, 16_777_216),
      fetchResolve: resolveVar(env, "GATEWAY_INTERN_FETCH_RESOLVE"),
      fetchAllowedHosts: listVar(env, "GATEWAY_INTERN_FETCH_ALLOWED_HOSTS"),
      gatewayUrl: nonEmpty(env.GATEWAY_INTERN_GATEWAY_URL),
      hostListen: internHostListen,
      hostAdvertise: nonEmpty(env.GATEWAY_INTERN_HOST_ADVERTISE) ?? (["0.0.0.0", "::"].includes(internHostListen) ? os.hostname() : internHostListen),
    },
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

function listenerLimits(env: Env): ListenerLimits {
  const headersTimeoutMs = intVar(env, "GATEWAY_HTTP_HEADERS_TIMEOUT_MS", 30_000, 10, 600_000);
  const requestTimeoutMs = intVar(env, "GATEWAY_HTTP_REQUEST_TIMEOUT_MS", 3_600_000, 0, 86_400_000);
  if (requestTimeoutMs !== 0 && requestTimeoutMs < headersTimeoutMs) {
    throw new Error(`GATEWAY_HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be 0 or at least GATEWAY_HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: intVar(env, "GATEWAY_HTTP_KEEP_ALIVE_TIMEOUT_MS", 65_000, 10, 3_600_000),
    maxConnections: intVar(env, "GATEWAY_MAX_CONNECTIONS", 10_000, 1, 1_000_000),
    maxConcurrentStreams: intVar(env, "GATEWAY_GRPC_MAX_CONCURRENT_STREAMS", 1_000, 1, 1_000_000),
    sessionMemoryMiB: intVar(env, "GATEWAY_GRPC_SESSION_MEMORY_MIB", 32, 1, 4_096),
    idleSessionMs: intVar(env, "GATEWAY_GRPC_IDLE_TIMEOUT_MS", 300_000, 0, 86_400_000),
  };
}

/** A positive integer, or `auto`: one per CPU this process may use. */
function workersVar(env: Env): number {
  const raw = nonEmpty(env.GATEWAY_WORKERS);
  if (raw?.toLowerCase() === "auto") return os.availableParallelism();
  const workers = Number(raw ?? 1);
  if (!Number.isInteger(workers) || workers < 1 || workers > 1_024) throw new Error(`GATEWAY_WORKERS must be "auto" or an integer from 1 to 1024, got "${raw}"`);
  return workers;
}

/** The CPU limit defaults to the shell's time limit: a command never needs more than it may run. */
function shellLimits(env: Env, shellTimeoutMs: number): ShellLimits {
  return {
    maxProcesses: intVar(env, "GATEWAY_INTERN_SHELL_MAX_PROCESSES", 256, 1, 1_000_000),
    maxMemoryMiB: intVar(env, "GATEWAY_INTERN_SHELL_MAX_MEMORY_MIB", 1_024, 16, 1_048_576),
    maxFileMiB: intVar(env, "GATEWAY_INTERN_SHELL_MAX_FILE_MIB", 1_024, 1, 1_048_576),
    cpuSeconds: intVar(env, "GATEWAY_INTERN_SHELL_CPU_SECONDS", Math.ceil(shellTimeoutMs / 1000), 1, 86_400),
  };
}

/**
 * Default `<dataDir>-interns`: beside the data directory (the same volume, as a rule, so a restart
 * keeps the homes) but not in it. Inside it, the data directory would have to let the interns'
 * users through; a home directory that holds the data directory would hand it to them.
 */
function internHomeDirVar(env: Env, dataDir: string): string {
  const dir = path.resolve(nonEmpty(env.GATEWAY_INTERN_HOME_DIR) ?? `${dataDir}-interns`);
  const within = (inner: string, outer: string) => inner === outer || inner.startsWith(outer + path.sep);
  if (within(dir, dataDir) || within(dataDir, dir)) {
    throw new Error(`GATEWAY_INTERN_HOME_DIR (${dir}) must be outside GATEWAY_DATA_DIR (${dataDir}), and the other way round`);
  }
  return dir;
}

function storageConfig(env: Env, dataDir: string): StorageConfig {
  const bucket = nonEmpty(env.GATEWAY_S3_BUCKET);
  if (!bucket) return { kind: "local", dir: path.resolve(nonEmpty(env.GATEWAY_FILES_DIR) ?? path.join(dataDir, "files")) };
  const accessKeyId = nonEmpty(env.GATEWAY_S3_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.GATEWAY_S3_SECRET_ACCESS_KEY);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new Error("GATEWAY_S3_ACCESS_KEY_ID and GATEWAY_S3_SECRET_ACCESS_KEY must be set together");
  }
  const endpoint = nonEmpty(env.GATEWAY_S3_ENDPOINT);
  return {
    kind: "s3",
    bucket,
    prefix: env.GATEWAY_S3_PREFIX ?? "",
    region: nonEmpty(env.GATEWAY_S3_REGION) ?? "us-east-1",
    endpoint,
    // S3-compatible services mostly want the bucket in the path; AWS wants it in the host name.
    forcePathStyle: boolVar(env, "GATEWAY_S3_FORCE_PATH_STYLE", endpoint !== undefined),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  };
}

/**
 * OTLP's own rules: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the traces URL as it is;
 * OTEL_EXPORTER_OTLP_ENDPOINT is a base URL that `v1/traces` is appended to.
 */
function tracingConfig(env: Env): TracingConfig {
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const tracesUrl = traces ?? (base === undefined ? undefined : `${base}${base.endsWith("/") ? "" : "/"}v1/traces`);
  if (tracesUrl !== undefined && !/^https?:\/\/[^/]/.test(tracesUrl)) {
    throw new Error(`${traces === undefined ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} must be an http:// or https:// URL, got "${traces ?? base}"`);
  }
  return { tracesUrl, serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? "model-gateway" };
}

/** GATEWAY_OWNER_EMAIL, checked as a member's email is (members.proto); `owner@localhost` when unset. */
export function ownerEmailOf(env: Env = process.env): string {
  const email = nonEmpty(env.GATEWAY_OWNER_EMAIL) ?? "owner@localhost";
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) throw new Error(`GATEWAY_OWNER_EMAIL must be an email address, got "${email}"`);
  return email;
}

const ENTITLEMENTS: Record<string, string> = { interns: "interns", "private-endpoints": "private_endpoints", private_endpoints: "private_endpoints" };

/** A comma list of `interns` and `private-endpoints`, or `none`; unset: both. */
function entitlementsVar(env: Env, name: string): string[] {
  const items = listVar(env, name);
  if (items.length === 0) return ["interns", "private_endpoints"];
  if (items.length === 1 && items[0] === "none") return [];
  return [
    ...new Set(
      items.map((item) => {
        const entitlement = ENTITLEMENTS[item];
        if (!entitlement) throw new Error(`${name} must be a comma list of interns and private-endpoints, or none; got "${item}"`);
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

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** A comma-separated list, lower-cased, without empty items. */
function listVar(env: Env, name: string): string[] {
  return (env[name] ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== "");
}

/** `host=address,…` pairs, host names lower-cased. */
function resolveVar(env: Env, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of listVar(env, name)) {
    const [host, address, extra] = item.split("=").map((part) => part.trim());
    if (!host || !address || extra !== undefined) throw new Error(`${name} must be a list of host=address pairs, got "${item}"`);
    out[host] = address;
  }
  return out;
}

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

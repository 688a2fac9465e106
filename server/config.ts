import path from "node:path";

/** Everything the gateway reads from its environment (12-factor); documented in the README. */
export interface GatewayConfig {
  /** REST facade, Connect and gRPC-Web (HTTP/1.1). */
  port: number;
  /** gRPC over h2c (and Connect over HTTP/2). */
  grpcPort: number;
  host: string;
  /** Embedded Postgres data and other local state. */
  dataDir: string;
  /** External Postgres; when unset an embedded one is started under `dataDir`. */
  databaseUrl: string | undefined;
  /** Port of the embedded Postgres; 0 picks a free one at each start. */
  embeddedPostgresPort: number;
  /** Secret of the first management key; when unset a random one is generated and printed once. */
  bootstrapKey: string | undefined;
  logLevel: string;
  /** Idle time after which an SSE stream gets a `: keepalive` comment. */
  sseKeepaliveMs: number;
  /** Daily quota of free-model requests per key, reported as `free_model_daily_requests`. */
  freeModelDailyRequests: number;
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownGraceMs: number;
  /** Operator token of OperatorService (`npm run admin`); when unset, kept in `dataDir/operator.token`. */
  operatorToken: string | undefined;
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
  /** GATEWAY_CONFIG: JSON or YAML file of providers, models and regional hosts; none = empty catalog. */
  catalogFile: string | undefined;
  /** Requests per key per rate-limit window; 0 turns the limit off. */
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  /** Time allowed for one inference call end to end, fallbacks included (504 after it). */
  requestTimeoutMs: number;
  batch: BatchEngineConfig;
}

/** The batch engine of this instance (server/batches/batch-engine.ts). */
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

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): GatewayConfig {
  return {
    port: intVar(env, "PORT", 8080, 0, 65535),
    grpcPort: intVar(env, "GRPC_PORT", 50051, 0, 65535),
    host: env.HOST ?? "0.0.0.0",
    dataDir: path.resolve(env.GATEWAY_DATA_DIR ?? ".data"),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    embeddedPostgresPort: intVar(env, "GATEWAY_PG_PORT", 0, 0, 65535),
    bootstrapKey: nonEmpty(env.GATEWAY_BOOTSTRAP_KEY),
    logLevel: env.LOG_LEVEL ?? "info",
    sseKeepaliveMs: intVar(env, "GATEWAY_SSE_KEEPALIVE_MS", 30_000, 10, 3_600_000),
    freeModelDailyRequests: intVar(env, "GATEWAY_FREE_MODEL_DAILY_REQUESTS", 50, 0, 1_000_000),
    shutdownGraceMs: intVar(env, "GATEWAY_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    operatorToken: nonEmpty(env.GATEWAY_OPERATOR_TOKEN),
    masterKey: nonEmpty(env.GATEWAY_MASTER_KEY),
    privateEndpointAllowedHosts: listVar(env, "GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS"),
    privateEndpointCaFile: nonEmpty(env.GATEWAY_PRIVATE_ENDPOINT_CA_FILE),
    privateEndpointTimeoutMs: intVar(env, "GATEWAY_PRIVATE_ENDPOINT_TIMEOUT_MS", 10_000, 100, 120_000),
    catalogFile: nonEmpty(env.GATEWAY_CONFIG),
    rateLimitRequests: intVar(env, "GATEWAY_RATE_LIMIT_REQUESTS", 600, 0, 100_000_000),
    rateLimitWindowSeconds: intVar(env, "GATEWAY_RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
    requestTimeoutMs: intVar(env, "GATEWAY_REQUEST_TIMEOUT_MS", 600_000, 100, 3_600_000),
    batch: {
      concurrency: intVar(env, "GATEWAY_BATCH_CONCURRENCY", 64, 0, 10_000),
      providerConcurrency: intVar(env, "GATEWAY_BATCH_PROVIDER_CONCURRENCY", 32, 1, 10_000),
      leaseSeconds: intVar(env, "GATEWAY_BATCH_LEASE_SECONDS", 30, 1, 3_600),
      maxAttempts: intVar(env, "GATEWAY_BATCH_MAX_ATTEMPTS", 5, 1, 100),
      retryBaseMs: intVar(env, "GATEWAY_BATCH_RETRY_BASE_MS", 1_000, 1, 600_000),
      pollMs: intVar(env, "GATEWAY_BATCH_POLL_MS", 250, 5, 60_000),
      nativePollMs: intVar(env, "GATEWAY_BATCH_NATIVE_POLL_MS", 30_000, 5, 3_600_000),
    },
  };
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

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

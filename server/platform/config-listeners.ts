import os from "node:os";
import { type Env, intVar, nonEmpty } from "./config-vars.js";

/** Time, connection and stream limits of the HTTP port (HTTP/1.1) and the gRPC port (h2c). */
export interface ListenerLimits {
  /**
   * HTTP port: a request's head must be in this long after its first byte (or after the connection
   * opened), else 408 and closed.
   */
  headersTimeoutMs: number;
  /**
   * HTTP port: a request must be received whole (head and body) this long after its first byte; 0 =
   * no limit. The answer is not timed.
   */
  requestTimeoutMs: number;
  /** HTTP port: a connection idle between requests is closed after this long. */
  keepAliveTimeoutMs: number;
  /** Open connections each port accepts at most; more are closed at once. */
  maxConnections: number;
  /**
   * Connections each port's kernel queue holds while they wait to be accepted (`listen`'s backlog;
   * Node's own default is 511). A burst of thousands of new connections that finds the queue full
   * has its SYNs dropped, and the clients retry after 1, 3, 7, 15 s. The kernel caps it at
   * `net.core.somaxconn` (docs/security.md).
   */
  listenBacklog: number;
  /** gRPC port: streams one HTTP/2 connection may have open at once; more are refused (REFUSED_STREAM). */
  maxConcurrentStreams: number;
  /** gRPC port: memory one HTTP/2 connection may hold, in MiB; past it, new streams are refused. */
  sessionMemoryMiB: number;
  /** gRPC port: a connection without an open stream this long is closed (GOAWAY); 0 = never. */
  idleSessionMs: number;
}

export function listenerLimits(env: Env): ListenerLimits {
  const headersTimeoutMs = intVar(env, "GATEWAY_HTTP_HEADERS_TIMEOUT_MS", 30_000, 10, 600_000);
  const requestTimeoutMs = intVar(env, "GATEWAY_HTTP_REQUEST_TIMEOUT_MS", 3_600_000, 0, 86_400_000);
  if (requestTimeoutMs !== 0 && requestTimeoutMs < headersTimeoutMs) {
    throw new Error(
      `GATEWAY_HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be 0 ` +
        `or at least GATEWAY_HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: intVar(env, "GATEWAY_HTTP_KEEP_ALIVE_TIMEOUT_MS", 65_000, 10, 3_600_000),
    maxConnections: intVar(env, "GATEWAY_MAX_CONNECTIONS", 10_000, 1, 1_000_000),
    listenBacklog: intVar(env, "GATEWAY_LISTEN_BACKLOG", 4_096, 1, 65_535),
    maxConcurrentStreams: intVar(env, "GATEWAY_GRPC_MAX_CONCURRENT_STREAMS", 1_000, 1, 1_000_000),
    sessionMemoryMiB: intVar(env, "GATEWAY_GRPC_SESSION_MEMORY_MIB", 32, 1, 4_096),
    idleSessionMs: intVar(env, "GATEWAY_GRPC_IDLE_TIMEOUT_MS", 300_000, 0, 86_400_000),
  };
}

/** A positive integer, or `auto`: one per CPU this process may use. */
export function workersVar(env: Env): number {
  const raw = nonEmpty(env.GATEWAY_WORKERS);
  if (raw?.toLowerCase() === "auto") return os.availableParallelism();
  const workers = Number(raw ?? 1);
  if (!Number.isInteger(workers) || workers < 1 || workers > 1_024)
    throw new Error(`GATEWAY_WORKERS must be "auto" or an integer from 1 to 1024, got "${raw}"`);
  return workers;
}

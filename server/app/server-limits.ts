/**
 * The two listeners with their limits (docs/configuration.md, ListenerLimits in config.ts).
 *
 * HTTP port: node:http checks its time limits on a timer, every `connectionsCheckingInterval`
 * (30 s unless set); checked every second at most here, a slow head is cut close to its limit.
 * `requestTimeout` times only the receiving of a request, head and body: an SSE stream or a long
 * answer runs past it unhurt, and its default is long enough for the largest upload on a slow link.
 *
 * @module
 */
import http from "node:http";
import http2 from "node:http2";
import type { ListenerLimits } from "../platform/config-listeners.js";

const CHECK_INTERVAL_MS = 1_000;

export function limitedHttpServer(limits: ListenerLimits, listener: http.RequestListener): http.Server {
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, limits.headersTimeoutMs),
    },
    listener,
  );
  server.maxConnections = limits.maxConnections;
  return server;
}

/**
 * gRPC port (h2c). `maxConcurrentStreams` is the SETTINGS value the gateway announces; node
 * refuses a stream over it even from a client that has not yet read it. (node's
 * `peerMaxConcurrentStreams` is the other direction: streams the gateway would open to its peer.)
 * HTTP/2 has no head timeout of its own: a connection that opens no stream, or stops having any,
 * is closed once it has been idle `idleSessionMs`, which also ends one that never sends a request.
 */
export function limitedHttp2Server(
  limits: ListenerLimits,
  listener: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
): http2.Http2Server {
  const server = http2.createServer(
    { maxSessionMemory: limits.sessionMemoryMiB, settings: { maxConcurrentStreams: limits.maxConcurrentStreams } },
    listener,
  );
  server.maxConnections = limits.maxConnections;
  if (limits.idleSessionMs > 0) server.on("session", (session) => closeWhenIdle(session, limits.idleSessionMs));
  return server;
}

/** Closes the session (GOAWAY, then the socket) once it has had no open stream for `idleMs`. */
function closeWhenIdle(session: http2.ServerHttp2Session, idleMs: number): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => session.close(), idleMs);
    timer.unref();
  };
  arm();
  session.on("stream", (stream) => {
    if (open++ === 0) clearTimeout(timer);
    stream.once("close", () => {
      if (--open === 0 && !session.closed) arm();
    });
  });
  session.once("close", () => clearTimeout(timer));
}

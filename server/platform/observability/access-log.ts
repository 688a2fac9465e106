import type { ExchangeObserver } from "../../../wire/exchange.js";
import type { Logger } from "../logger.js";

/**
 * One info line per answered request, on every protocol (`msg: "request"`): REST requests as the
 * facade reports them, gRPC, Connect and gRPC-Web calls as the core's observing interceptor does
 * (rpc-observation.ts). What was asked is named by its route template or RPC path, never the raw
 * path (which may hold ids); the caller by its key's label, never the key or its hash. With
 * tracing on, the line also carries the request's `trace_id` (server/platform/logger.ts).
 *
 * The line skips the logger's redaction pass: its fields are the ones listed here, none of them a
 * secret, and walking the redaction paths cost about four times the rest of the line (a few µs on
 * every request).
 */
export function accessLog(log: Logger): ExchangeObserver {
  const lines = log.child({}, { redact: { paths: [] } });
  return (exchange) => {
    // Below info (LOG_LEVEL=warn) the line is not even built.
    if (!lines.isLevelEnabled("info")) return;
    lines.info(
      {
        protocol: exchange.protocol,
        method: exchange.method,
        route: exchange.route ?? null,
        status: exchange.status,
        durationMs: Math.round(exchange.durationMs * 1000) / 1000,
        upstreamMs: Math.round(exchange.upstreamMs * 1000) / 1000,
        ...(exchange.upstreamCancelled === true ? { upstreamCancelled: true } : {}),
        requestId: exchange.requestId,
        keyLabel: exchange.keyLabel ?? null,
        ...(exchange.contentFlagged === true ? { contentFlagged: true } : {}),
        ...(exchange.providerKey === undefined ? {} : { providerKey: exchange.providerKey }),
      },
      "request",
    );
  };
}

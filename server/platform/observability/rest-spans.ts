import type { IncomingMessage, ServerResponse } from "node:http";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ExchangeObserver } from "../../../wire/exchange.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GATEWAY_REQUEST_ID,
  ATTR_GATEWAY_UPSTREAM_CANCELLED,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from "./span-attributes.js";
import { activeTracer } from "./tracing.js";

/**
 * The SERVER span of a REST request. It is started where the request reaches the facade and made
 * the current span for everything the request runs (the facade stays free of tracing: it imports
 * gen/ and wire/ only); the core, called in-process, makes its upstream spans under it. It ends when
 * the facade reports the finished exchange, which knows the route template (the span's name) and
 * the status: the facade calls its observers from the request's own async context, where this span
 * is still the current one.
 */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Runs `handle` within a new server span (tracing on), or just runs it. */
export function handleInSpan(handle: RequestHandler, req: IncomingMessage, res: ServerResponse): void {
  const tracer = activeTracer();
  if (tracer === undefined) {
    handle(req, res);
    return;
  }
  // A caller's `traceparent` makes the request part of its trace.
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = req.method ?? "GET";
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method } },
    parent,
  );
  context.with(trace.setSpan(parent, span), handle, undefined, req, res);
}

/**
 * Ends the span of a finished REST exchange; a no-op without tracing and for RPC exchanges
 * (rpc-observation.ts ends those).
 */
export const endRestSpan: ExchangeObserver = (exchange) => {
  if (exchange.protocol !== "rest" || activeTracer() === undefined) return;
  const span = trace.getActiveSpan();
  if (span === undefined) return;
  // HTTP conventions: `{method} {route}`, the method alone when nothing matched.
  if (exchange.route !== undefined) {
    span.updateName(`${exchange.method} ${exchange.route}`);
    span.setAttribute(ATTR_HTTP_ROUTE, exchange.route);
  }
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, exchange.status);
  span.setAttribute(ATTR_GATEWAY_REQUEST_ID, exchange.requestId);
  if (exchange.upstreamCancelled === true) span.setAttribute(ATTR_GATEWAY_UPSTREAM_CANCELLED, true);
  // A server span fails on 5xx only: a 4xx is the client's error, answered as designed.
  if (exchange.status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(exchange.status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
};

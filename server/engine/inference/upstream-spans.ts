import { SpanKind, SpanStatusCode, type Span } from "@opentelemetry/api";
import type { UpstreamTarget } from "../providers/provider.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GATEWAY_UPSTREAM_MODEL,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from "../../platform/observability/span-attributes.js";
import { activeTracer } from "../../platform/observability/tracing.js";

/**
 * The CLIENT span of one upstream attempt of an inference call, under the request's span, with
 * the GenAI conventions' attributes: named `{operation} {model}`, ended with the tokens the
 * attempt used, or with the failure that ended it (and made the call fall back, or fail).
 * Without tracing nothing is made: `startUpstreamSpan` returns undefined after one check.
 */
export interface UpstreamSpanEnd {
  inputTokens?: number;
  outputTokens?: number;
  /** The model the provider says answered. */
  responseModel?: string;
  /** Why the attempt failed: the provider's HTTP status, else the kind of failure (`timeout`, `connect`, …). */
  errorType?: string;
  /** The provider's HTTP status, when it answered with an error. */
  status?: number;
  message?: string;
}

/**
 * `operation`: `chat` or `embeddings` (the GenAI operation names); `provider`: the catalog's
 * provider slug; `model`: the catalog model (`author/slug`) as the caller asked for it. Positional,
 * so that a call without tracing makes no object for it.
 */
export function startUpstreamSpan(
  operation: string,
  provider: string,
  model: string,
  target: Pick<UpstreamTarget, "upstreamModelId" | "baseUrl">,
): Span | undefined {
  const tracer = activeTracer();
  if (tracer === undefined) return undefined;
  const url = new URL(target.baseUrl);
  return tracer.startSpan(`${operation} ${model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: operation,
      [ATTR_GEN_AI_PROVIDER_NAME]: provider,
      [ATTR_GEN_AI_SYSTEM]: provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: model,
      [ATTR_GATEWAY_UPSTREAM_MODEL]: target.upstreamModelId,
      [ATTR_SERVER_ADDRESS]: url.hostname.replace(/^\[|\]$/g, ""),
      [ATTR_SERVER_PORT]: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
    },
  });
}

export function endUpstreamSpan(span: Span, end: UpstreamSpanEnd): void {
  if (end.inputTokens !== undefined) span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, end.inputTokens);
  if (end.outputTokens !== undefined) span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, end.outputTokens);
  if (end.responseModel) span.setAttribute(ATTR_GEN_AI_RESPONSE_MODEL, end.responseModel);
  if (end.status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, end.status);
  if (end.errorType !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, end.errorType);
    span.setStatus({ code: SpanStatusCode.ERROR, message: end.message });
  }
  span.end();
}

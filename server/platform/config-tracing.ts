import { type Env, nonEmpty } from "./config-vars.js";

/**
 * The OpenTelemetry SDK's standard variables this gateway reads itself; the SDK reads its others
 * (headers, sampler) as usual.
 */
export interface TracingConfig {
  /** Where spans are sent (OTLP over HTTP, JSON); undefined: tracing off, the SDK is not even loaded. */
  tracesUrl: string | undefined;
  /** OTEL_SERVICE_NAME, default `model-gateway`. */
  serviceName: string;
}

/**
 * OTLP's own rules: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the traces URL as it is;
 * OTEL_EXPORTER_OTLP_ENDPOINT is a base URL that `v1/traces` is appended to.
 */
export function tracingConfig(env: Env): TracingConfig {
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const tracesUrl = traces ?? (base === undefined ? undefined : `${base}${base.endsWith("/") ? "" : "/"}v1/traces`);
  if (tracesUrl !== undefined && !/^https?:\/\/[^/]/.test(tracesUrl)) {
    throw new Error(
      `${traces === undefined ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} ` +
        `must be an http:// or https:// URL, got "${traces ?? base}"`,
    );
  }
  return { tracesUrl, serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? "model-gateway" };
}

import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger, type Tracer } from "@opentelemetry/api";
import type { TracingConfig } from "../config-tracing.js";
import type { Logger } from "../logger.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * OpenTelemetry traces, off unless an OTLP endpoint is configured (docs/configuration.md). Only
 * `@opentelemetry/api` is loaded otherwise: every span site first asks `activeTracer()`, one
 * variable read, and makes nothing when it is undefined. When on, the SDK, the OTLP/HTTP exporter
 * (JSON) and the resource detection are imported here and registered globally (tracer provider,
 * AsyncLocalStorage context, W3C trace-context propagation); `stop()` flushes what is batched and
 * unregisters all of it, so a later gateway in the same process (the tests) starts clean.
 *
 * Spans: one SERVER span per request (rest-spans.ts for REST, rpc-observation.ts for calls over
 * the network) and one CLIENT span per upstream attempt (upstream-spans.ts).
 */
export interface Tracing {
  /** Ends the export: spans still batched are sent first. */
  stop(): Promise<void>;
}

/** The instrumentation scope every span of the gateway is made under. */
const SCOPE = "model-gateway";

let tracer: Tracer | undefined;

/** The gateway's tracer while tracing is on; undefined otherwise. */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

const OFF: Tracing = { stop: async () => {} };

export async function startTracing(config: TracingConfig, log: Logger): Promise<Tracing> {
  if (config.tracesUrl === undefined) return OFF;
  // The providers are process-wide: a second gateway in one process would share and then stop them.
  if (tracer) throw new Error("tracing is already on in this process");
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { defaultResource, detectResources, envDetector, resourceFromAttributes },
    { ATTR_SERVICE_NAME },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
  ]);
  // The exporter reports failed exports (collector down) through `diag`: they reach our log, once per failure.
  diag.setLogger(diagToLog(log), DiagLogLevel.WARN);
  const provider = new NodeTracerProvider({
    // OTEL_RESOURCE_ATTRIBUTES as the SDK reads it; the service name as configured wins.
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }))],
  });
  provider.register();
  tracer = provider.getTracer(SCOPE);
  log.info(
    { traces: withoutCredentials(config.tracesUrl), service: config.serviceName },
    "tracing on: spans are exported over OTLP",
  );
  return {
    async stop() {
      tracer = undefined;
      try {
        await provider.shutdown();
      } catch (err) {
        log.warn({ err: errorMessage(err) }, "the last spans could not be exported");
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      }
    },
  };
}

function diagToLog(log: Logger): DiagLogger {
  const ignore = () => {};
  return {
    error: (message: string) => log.warn({ component: "opentelemetry" }, message),
    warn: (message: string) => log.warn({ component: "opentelemetry" }, message),
    info: ignore,
    debug: ignore,
    verbose: ignore,
  };
}

/** The URL as logs may show it: a collector's credentials in its userinfo or query stay out. */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

import { trace } from "@opentelemetry/api";
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

export type { Logger };

/**
 * Structured JSON logs on stdout (or `destination`, for tests). Credentials never reach a log line:
 * request headers are not logged, and these paths are censored wherever a caller passes such an
 * object by mistake. A line logged while a trace span is current carries its `trace_id` and
 * `span_id` (only ever with tracing on: without the SDK no span is current).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: undefined,
    mixin: traceFields,
    mixinMergeStrategy: withTraceFields,
    redact: {
      paths: [
        "authorization",
        "*.authorization",
        "headers.authorization",
        "*.headers.authorization",
        "key",
        "*.key",
        "secret",
        "*.secret",
        "token",
        "*.token",
        "value",
        "*.value",
        "password",
        "*.password",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Writes `text` as it is (not a log line) into the log's own output, after every line logged
 * before it: pino writes stdout asynchronously, so a plain `process.stdout.write` can overtake
 * lines still buffered (the bootstrap key must come after the line that says where to use it).
 */
export function writeToLogOutput(log: Logger, text: string): void {
  const stream = (log as unknown as Record<symbol, DestinationStream | undefined>)[pino.symbols.streamSym];
  if (stream) stream.write(text);
  else process.stdout.write(text);
}

/** Returned when no span is current: no object is made per line then. */
const NO_TRACE: object = Object.freeze({});

function traceFields(): object {
  const span = trace.getActiveSpan();
  if (span === undefined) return NO_TRACE;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** pino's default merge assigns into the mixin's object, which the shared NO_TRACE must never be. */
function withTraceFields(fields: object, traceIds: object): object {
  return traceIds === NO_TRACE ? fields : Object.assign(traceIds, fields);
}

import { trace } from "@opentelemetry/api";
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { PinoPretty } from "pino-pretty";

export type { Logger };

/**
 * How log lines are written: `json`, one JSON object per line (for collectors), or `pretty`, one
 * human-readable line per entry with its fields below (pino-pretty, for a person at a terminal).
 */
export type LogFormat = "json" | "pretty";
export const LOG_FORMATS: readonly LogFormat[] = ["json", "pretty"];

/**
 * The format of the gateway's own log: GATEWAY_LOG_FORMAT when set, else pretty on a terminal and
 * JSON everywhere else (a pipe, a file, a container's log collector), as a log collector expects.
 */
export function chooseLogFormat(setting: LogFormat | undefined, stdoutIsTty: boolean): LogFormat {
  return setting ?? (stdoutIsTty ? "pretty" : "json");
}

/**
 * Structured logs on stdout (or `destination`, for tests), as JSON lines unless `format` is
 * `pretty`. Credentials never reach a log line: request headers are not logged, and these paths
 * are censored wherever a caller passes such an object by mistake; pino censors them while it
 * serializes the line, before the pretty printer sees it, so both formats show the same redacted
 * fields. A line logged while a trace span is current carries its `trace_id` and `span_id` (only
 * ever with tracing on: without the SDK no span is current).
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = "json"): Logger {
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
  if (format === "pretty") return pino(options, prettyStream(destination));
  return destination ? pino(options, destination) : pino(options);
}

/**
 * pino-pretty in this process, not as a pino transport (a worker thread): the lines reach it
 * already redacted, and text written between lines (writeToLogOutput) keeps its place. Colours
 * only on a terminal; times in the machine's local zone, as a person at it reads them.
 */
function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  return PinoPretty({
    ...(destination === undefined ? {} : { destination }),
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
  });
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

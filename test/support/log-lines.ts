import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../server/platform/logger.js";

/** One JSON log line as pino wrote it. */
export type LogLine = Record<string, unknown> & { level: number; msg: string };

/**
 * A logger made as the gateway makes its own (server/platform/logger.ts: redaction, trace ids), writing into
 * memory, so that tests read exactly the lines an operator would get on stdout.
 */
export interface CapturedLogs {
  log: Logger;
  lines: LogLine[];
  /** The whole output as written, to check that a secret appears nowhere in it. */
  text(): string;
}

export function captureLogs(level = "debug"): CapturedLogs {
  const lines: LogLine[] = [];
  let written = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString("utf8");
      written += text;
      for (const line of text.split("\n")) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { log: createLogger(level, stream), lines, text: () => written };
}

/** The access lines (server/platform/observability/access-log.ts) of one request id. */
export function accessLinesOf(lines: readonly LogLine[], requestId: string): LogLine[] {
  return lines.filter((line) => line.msg === "request" && line.requestId === requestId);
}

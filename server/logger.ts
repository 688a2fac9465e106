import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Structured JSON logs on stdout. Credentials never reach a log line: request headers are not
 * logged, and these paths are censored wherever a caller passes such an object by mistake.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
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
  });
}

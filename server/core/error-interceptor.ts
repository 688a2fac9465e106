import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { BaseError, ConnectionError, TimeoutError } from "sequelize";
import type { Logger } from "../logger.js";
import { gatewayError } from "./errors.js";

/**
 * Outermost interceptor: whatever a handler throws leaves as a ConnectError. Unexpected errors are
 * logged (without request data) and answered 500 without internals; a database that cannot be
 * reached is 503 so callers retry.
 */
export function errorInterceptor(log: Logger): Interceptor {
  return (next) => async (req) => {
    const method = `${req.method.parent.typeName}/${req.method.name}`;
    try {
      const res = await next(req);
      // A server stream fails while it is being read, after this interceptor returned.
      if (res.stream) return { ...res, message: mapStreamErrors(res.message, log, method) };
      return res;
    } catch (err) {
      throw asConnectError(err, log, method);
    }
  };
}

async function* mapStreamErrors<T>(messages: AsyncIterable<T>, log: Logger, method: string): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw asConnectError(err, log, method);
  }
}

/** Methods whose every error carries `metadata.reason`, the 500 included (spec 4.7, 7: `internal_error`). */
const REASONED_500 = new Set(["gateway.v1.InternsService/ChatCompletions", "gateway.v1.InternsService/GetInternDaemon"]);

function asConnectError(err: unknown, log: Logger, method: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof ConnectionError || err instanceof TimeoutError) {
    log.warn({ method, err: (err as Error).message }, "database unavailable");
    return gatewayError(503, "Service temporarily unavailable", { retryable: true });
  }
  const error = err instanceof Error ? err : new Error(String(err));
  log.error({ method, err: { name: error.name, message: error instanceof BaseError ? "database error" : error.message, stack: error.stack } }, "unhandled error");
  return gatewayError(500, "Internal server error", { retryable: true, ...(REASONED_500.has(method) ? { reason: "internal_error" } : {}) });
}

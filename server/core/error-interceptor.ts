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
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError) throw err;
      if (err instanceof ConnectionError || err instanceof TimeoutError) {
        log.warn({ method: req.method.name, err: (err as Error).message }, "database unavailable");
        throw gatewayError(503, "Service temporarily unavailable", { retryable: true });
      }
      const error = err instanceof Error ? err : new Error(String(err));
      log.error({ method: `${req.method.parent.typeName}/${req.method.name}`, err: { name: error.name, message: error instanceof BaseError ? "database error" : error.message, stack: error.stack } }, "unhandled error");
      throw gatewayError(500, "Internal server error", { retryable: true });
    }
  };
}

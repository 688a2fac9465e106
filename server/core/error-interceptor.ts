import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { BaseError, ConnectionError, TimeoutError } from "sequelize";
import type { Logger } from "../logger.js";
import { reasoned_errors } from "../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../../wire/errors.js";
import { optionOf } from "../../wire/proto-options.js";
import { REQUEST_ID_HEADER } from "../../wire/request-id.js";

/**
 * Outermost interceptor: whatever a handler throws leaves as a ConnectError. Unexpected errors are
 * logged (without request data) and answered 500 without internals; a database that cannot be
 * reached is 503 so callers retry.
 */
export function errorInterceptor(log: Logger): Interceptor {
  return (next) => async (req) => {
    const method = { name: `${req.method.parent.typeName}/${req.method.name}`, reasoned: optionOf(req.method, reasoned_errors) };
    try {
      const res = await next(req);
      // A server stream fails while it is being read, after this interceptor returned.
      if (res.stream) return { ...res, message: mapStreamErrors(res.message, log, method, req) };
      return res;
    } catch (err) {
      throw asConnectError(err, log, method, req);
    }
  };
}

interface MethodInfo {
  name: string;
  /** `(gateway.v1.reasoned_errors)`: its 500 carries `internal_error` too. */
  reasoned: boolean;
}

/** What of the call the error lines name: its signal, and its request id (decided before this interceptor runs). */
interface CallInfo {
  signal: AbortSignal;
  header: Headers;
}

async function* mapStreamErrors<T>(messages: AsyncIterable<T>, log: Logger, method: MethodInfo, call: CallInfo): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw asConnectError(err, log, method, call);
  }
}

function asConnectError(err: unknown, log: Logger, method: MethodInfo, { signal, header }: CallInfo): ConnectError {
  if (err instanceof ConnectError) return err;
  const requestId = header.get(REQUEST_ID_HEADER);
  if (signal.aborted) {
    // The caller went away, the deadline passed or the gateway is stopping, and the handler failed
    // on that (a body cut off, a stream closed): the abort is the answer, not a fault of ours.
    log.debug({ method: method.name, requestId, err: err instanceof Error ? err.message : String(err) }, "call ended by its abort");
    return ConnectError.from(signal.reason, Code.Canceled);
  }
  if (err instanceof ConnectionError || err instanceof TimeoutError) {
    log.warn({ method: method.name, requestId, err: (err as Error).message }, "database unavailable");
    return gatewayError(503, "Service temporarily unavailable", { retryable: true });
  }
  const error = err instanceof Error ? err : new Error(String(err));
  log.error({ method: method.name, requestId, err: { name: error.name, message: error instanceof BaseError ? "database error" : error.message, stack: error.stack } }, "unhandled error");
  return gatewayError(500, "Internal server error", { retryable: true, ...(method.reasoned ? { reason: "internal_error" } : {}) });
}

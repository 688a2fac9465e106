import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { BaseError, ConnectionError, DatabaseError, TimeoutError } from "sequelize";
import type { Logger } from "../logger.js";
import { reasoned_errors } from "../../../gen/gateway/v1/options_pb.js";
import { gatewayError, errorMessage } from "../../../wire/errors.js";
import { optionOf } from "../../../wire/proto-options.js";
import { REQUEST_ID_HEADER } from "../../../wire/request-id.js";

/**
 * Outermost interceptor: whatever a handler throws leaves as a ConnectError. Unexpected errors are
 * logged (without request data) and answered 500 without internals; a database that cannot be
 * reached is 503 so callers retry (`unavailable` on the methods whose every error has a reason).
 */
export function errorInterceptor(log: Logger): Interceptor {
  return (next) => async (req) => {
    const method = {
      name: `${req.method.parent.typeName}/${req.method.name}`,
      reasoned: optionOf(req.method, reasoned_errors),
    };
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
  /** `(gateway.v1.reasoned_errors)`: its 500 carries `internal_error`, its 503 `unavailable`. */
  reasoned: boolean;
}

/** What of the call the error lines name: its signal, and its request id (decided before this interceptor runs). */
interface CallInfo {
  signal: AbortSignal;
  header: Headers;
}

async function* mapStreamErrors<T>(
  messages: AsyncIterable<T>,
  log: Logger,
  method: MethodInfo,
  call: CallInfo,
): AsyncIterable<T> {
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
    log.debug({ method: method.name, requestId, err: errorMessage(err) }, "call ended by its abort");
    return ConnectError.from(signal.reason, Code.Canceled);
  }
  if (isDatabaseUnavailable(err)) {
    log.warn({ method: method.name, requestId, err: err.message }, "database unavailable");
    return gatewayError(503, "Service temporarily unavailable", {
      retryable: true,
      ...(method.reasoned ? { reason: "unavailable" } : {}),
    });
  }
  const error = err instanceof Error ? err : new Error(String(err));
  log.error(
    {
      method: method.name,
      requestId,
      err: {
        name: error.name,
        message: error instanceof BaseError ? "database error" : error.message,
        stack: error.stack,
      },
    },
    "unhandled error",
  );
  return gatewayError(500, "Internal server error", {
    retryable: true,
    ...(method.reasoned ? { reason: "internal_error" } : {}),
  });
}

/**
 * SQLSTATEs of a connection the server ended: class 08 (connection exception) and the shutdowns
 * of class 57 — `pg_terminate_backend` and a fast stop (57P01), a crash (57P02), a server still
 * starting or stopping (57P03).
 */
const LOST_CONNECTION_STATE = /^(08|57P0[123]$)/;
/** Socket errors of a connection cut under a query. */
const LOST_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "ECONNREFUSED"]);
/** What pg says, without a code, of a query on a connection that has ended or is ending. */
const LOST_CONNECTION_MESSAGE =
  /^(Connection terminated( unexpectedly)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

/**
 * Whether the database could not be reached: no connection could be had (Sequelize's
 * ConnectionError, which includes the pool's acquire timeout), or a query ran on a pooled connection that the
 * server had already ended — a restart or a terminated backend whose end the gateway had not read
 * yet. Sequelize reports the latter as a plain DatabaseError, so the driver's error it wraps
 * decides. Only Sequelize's errors count: a reset socket of an upstream call is not the database.
 */
export function isDatabaseUnavailable(err: unknown): err is BaseError {
  if (err instanceof ConnectionError || err instanceof TimeoutError) return true;
  if (!(err instanceof DatabaseError)) return false;
  const { code, message }: { code?: unknown; message?: unknown } = err.parent ?? {};
  if (typeof code === "string") return LOST_CONNECTION_STATE.test(code) || LOST_SOCKET_CODES.has(code);
  return typeof message === "string" && LOST_CONNECTION_MESSAGE.test(message);
}

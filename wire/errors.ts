import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "../gen/gateway/v1/errors_pb.js";

/**
 * The one error mechanism (docs/api/conventions.md). Handlers throw `gatewayError(status, …)`: a
 * ConnectError whose code is the closest gRPC code and whose detail carries the API's HTTP status,
 * reason and retryability, so gRPC and REST callers learn the same thing. The REST facade turns it
 * back into the API's error envelope with `httpErrorOf`.
 */
export interface HttpError {
  status: number;
  message: string;
  reason?: string;
  retryable?: boolean;
  /** The request field at fault, as a JSON path (`messages[0].role`). */
  field?: string;
}

const CODE_FOR_STATUS: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  402: Code.FailedPrecondition,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  405: Code.Unimplemented,
  408: Code.DeadlineExceeded,
  409: Code.Aborted,
  410: Code.NotFound,
  413: Code.ResourceExhausted,
  415: Code.InvalidArgument,
  422: Code.InvalidArgument,
  429: Code.ResourceExhausted,
  499: Code.Canceled,
  500: Code.Internal,
  501: Code.Unimplemented,
  502: Code.Unavailable,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
  524: Code.DeadlineExceeded,
  529: Code.Unavailable,
};

/** The standard mapping for errors that carry no detail (connect-es' own, e.g. Unimplemented). */
const STATUS_FOR_CODE: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function gatewayError(
  status: number,
  message: string,
  options: {
    reason?: string;
    retryable?: boolean;
    cause?: unknown;
    /** Response headers, e.g. Retry-After. */
    headers?: Record<string, string>;
    /** The request field the error is about (the detail's `field`; OpenAI's `param` on REST). */
    field?: string;
  } = {},
): ConnectError {
  const code = CODE_FOR_STATUS[status] ?? (status >= 500 ? Code.Internal : Code.InvalidArgument);
  const detail = create(ErrorDetailSchema, {
    httpStatus: status,
    reason: options.reason ?? "",
    retryable: options.retryable ?? false,
    field: options.field ?? "",
  });
  const make = () =>
    new ConnectError(
      message,
      code,
      options.headers ? new Headers(options.headers) : undefined,
      [{ desc: ErrorDetailSchema, value: detail }],
      options.cause,
    );
  return status < 500 ? withoutStack(make) : make();
}

/**
 * The same error with other metadata (response headers, trailers, a request id): a copy, since the
 * original may be a shared constant (an abort reason). It keeps the original's stack, so capturing
 * a new one, which would only point here, is skipped.
 */
export function withMetadata(error: ConnectError, metadata: Headers): ConnectError {
  const copy = withoutStack(() => new ConnectError(error.rawMessage, error.code, metadata, undefined, error.cause));
  copy.details = error.details;
  copy.stack = error.stack;
  return copy;
}

/**
 * A refusal (4xx) is an answer, not a fault: no log or body ever shows its stack, and capturing
 * one (a V8 stack walk) was the largest single cost of a refused request — 13% of the CPU of a
 * 401 in the proxy benchmark's profile. Faults (5xx) keep theirs. Construction is synchronous, so
 * the limit is back before any other code runs.
 */
function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export function httpErrorOf(error: ConnectError): HttpError {
  const [detail] = error.findDetails(ErrorDetailSchema);
  if (detail && detail.httpStatus > 0) {
    return {
      status: detail.httpStatus,
      message: error.rawMessage,
      ...(detail.reason ? { reason: detail.reason, retryable: detail.retryable } : {}),
      ...(detail.field ? { field: detail.field } : {}),
    };
  }
  return { status: STATUS_FOR_CODE[error.code] ?? 500, message: error.rawMessage };
}

/**
 * What a thrown value says: its message when it is an Error, else its text. The one way the code
 * reads a caught value.
 */
export function errorMessage(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

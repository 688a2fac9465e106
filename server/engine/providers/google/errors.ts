import type { JsonObject } from "@bufbuild/protobuf";
import { isObject } from "../json-shape.js";
import { UpstreamError } from "../provider.js";
import { providerErrorMessage } from "../upstream-error-body.js";

/**
 * Google's errors are `{error: {code, message, status}}`: `code` is the HTTP status, `status` the
 * canonical gRPC name. The shared reader takes `code` when it is a status; this table covers the
 * bodies that carry only the name (some stream errors).
 */
const HTTP_STATUS_OF_GOOGLE_STATUS: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/** Unknown or missing names are a failure of the upstream, hence 502. */
export function statusOfGoogleError(error: JsonObject): number {
  const code = error.code;
  if (typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599) return code;
  const name = error.status;
  if (typeof name === "string" && Object.hasOwn(HTTP_STATUS_OF_GOOGLE_STATUS, name))
    return HTTP_STATUS_OF_GOOGLE_STATUS[name] ?? 502;
  return 502;
}

/** `{error: {…}}` sent with a 2xx status: as the whole answer, or as an event of a stream. */
export function inBodyError(body: JsonObject, apiKey: string): UpstreamError {
  const error = isObject(body.error) ? body.error : {};
  return new UpstreamError("status", providerErrorMessage(body, apiKey) ?? "the upstream reported an error", {
    status: statusOfGoogleError(error),
  });
}

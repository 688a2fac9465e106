/**
 * The error `type` names of the APIs whose routes the gateway also serves (method option
 * `(gateway.v1.error_dialect)`), by HTTP status. Their SDKs show `type` to their users (OpenAI's
 * `APIError.type`, Anthropic's `error.error.type`), so a 429 reads `rate_limit_error` there as it
 * does against the original API. The API's envelope is unchanged; `type` is added beside it.
 *
 * @module
 */
import { ErrorDialect } from "../gen/gateway/v1/options_pb.js";

const OPENAI: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "insufficient_quota",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "server_error",
  503: "service_unavailable_error",
  529: "service_unavailable_error",
};

const ANTHROPIC: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/** `type` of an error with this status in this dialect; undefined without one. */
export function errorTypeOf(dialect: ErrorDialect, status: number): string | undefined {
  switch (dialect) {
    case ErrorDialect.OPENAI:
      // Other client errors (405, 409, 410, 413, 422, ...) are invalid requests; other server
      // errors (502, 504, 524) the server's.
      return OPENAI[status] ?? (status < 500 ? "invalid_request_error" : "server_error");
    case ErrorDialect.ANTHROPIC:
      return ANTHROPIC[status] ?? (status < 500 ? "invalid_request_error" : "api_error");
    default:
      return undefined;
  }
}

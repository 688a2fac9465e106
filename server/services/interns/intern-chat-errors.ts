import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../../../wire/errors.js";

/**
 * The reasons of intern chat errors (docs/api/interns.md) with the `retryable` flag each one always carries,
 * so a reason is never sent with the wrong flag.
 */
const RETRYABLE = {
  bad_request: false,
  interaction_unknown: false,
  timeout: true,
  interaction_not_pending: false,
  attachment_failed: false,
  run_ended: false,
  payload_too_large: false,
  rate_limited: true,
  intern_unreachable: true,
  busy: true,
  not_found: false,
  intern_not_running: false,
  internal_error: true,
  // The API gives it no flag: the run's state is unknown, so repeating the request is not safe.
  stream_severed: false,
} as const;

export type InternChatReason = keyof typeof RETRYABLE;

export function retryableOf(reason: InternChatReason): boolean {
  return RETRYABLE[reason];
}

export function internChatError(
  status: number,
  reason: InternChatReason,
  message: string,
  headers?: Record<string, string>,
): ConnectError {
  return gatewayError(status, message, { reason, retryable: RETRYABLE[reason], ...(headers ? { headers } : {}) });
}

export function badRequest(message: string): ConnectError {
  return internChatError(400, "bad_request", message);
}

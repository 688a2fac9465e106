import type { Logger } from "../../platform/logger.js";
import type { UpstreamFailure } from "../providers/provider.js";

/**
 * One log line per failed upstream attempt, made only when an attempt fails: which provider, at
 * which endpoint (host and path of its base URL: never its key, which travels in headers), for
 * which model, what happened (the provider's status, or the failure's kind) and, when the call
 * falls back, which provider and model it tries next. Failures of the gateway's side (provider
 * down, its key refused, time-outs, broken answers) are warnings; a provider refusing the caller's
 * own request (400, 404, 413, 422) is the caller's business, at debug level.
 */
export interface UpstreamFailureReport {
  requestId: string | null;
  provider: string;
  /** The catalog model (`author/slug`). */
  model: string;
  /** The provider's own name of the model. */
  upstreamModel: string;
  baseUrl: string;
  /** How the attempt failed; `deadline`: the request's own deadline passed while it waited. */
  failure: UpstreamFailure | "deadline";
  /** The provider's HTTP status, when it answered with an error. */
  status: number | undefined;
  /** What the provider adapter made of it (scrubbed of credentials there). */
  detail: string;
  /** The key of the provider's pool the attempt used (`key-<n>`), when it has a pool. */
  poolKey?: string;
  /** The attempt tried next, when the call falls back (the same provider and model: another key of its pool). */
  next: { provider: string; model: string } | undefined;
}

/** A provider's error text can be long (an HTML page of a proxy): this much is enough to tell what it was. */
const DETAIL_CHARS = 300;

export function logUpstreamFailure(log: Logger, report: UpstreamFailureReport): void {
  const what = describe(report.failure, report.status);
  if (what === undefined) return;
  const fields = {
    requestId: report.requestId,
    provider: report.provider,
    endpoint: endpointOf(report.baseUrl),
    model: report.model,
    upstreamModel: report.upstreamModel,
    failure: report.failure,
    status: report.status,
    detail: report.detail.slice(0, DETAIL_CHARS),
    ...(report.poolKey === undefined ? {} : { poolKey: report.poolKey }),
    fallbackProvider: report.next?.provider,
    fallbackModel: report.next?.model,
  };
  const message = report.next ? `${what.message}; falling back to ${report.next.provider}` : what.message;
  if (what.level === "warn") log.warn(fields, message);
  else log.debug(fields, message);
}

function describe(
  failure: UpstreamFailureReport["failure"],
  status: number | undefined,
): { level: "warn" | "debug"; message: string } | undefined {
  switch (failure) {
    case "status":
      if (status === 401) return { level: "warn", message: "upstream refused the gateway's provider key" };
      if (status === 403) return { level: "warn", message: "upstream refused the request as forbidden" };
      if (status === 400 || status === 404 || status === 413 || status === 422)
        return { level: "debug", message: "upstream rejected the request" };
      return { level: "warn", message: "upstream answered with an error status" };
    case "connect":
      return { level: "warn", message: "upstream unreachable" };
    case "timeout":
      return { level: "warn", message: "upstream timed out before answering" };
    case "deadline":
      return { level: "warn", message: "request deadline passed while waiting on the upstream" };
    case "protocol":
      return { level: "warn", message: "upstream answered in an unexpected format" };
    case "cut":
      return { level: "warn", message: "upstream stream broke off" };
    case "unsupported":
      return { level: "debug", message: "upstream cannot serve this request" };
    case "aborted":
      // The client went away: the facade logs that, and nothing failed upstream.
      return undefined;
  }
}

/** Host and path of a base URL, e.g. `api.openai.com/v1`. */
function endpointOf(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.host}${url.pathname.replace(/\/$/, "")}`;
  } catch {
    return "(invalid base URL)";
  }
}

import { request, errors as undiciErrors } from "undici";
import { readLines } from "../../engine/index.js";
import { ATTACHMENT_HEADER, type RunEvent } from "../../../wire/host-protocol.js";
import type { InternHostAccess } from "./intern-hosts.js";

/**
 * The gateway's calls to an intern host's HTTP API (wire/host-protocol.ts). A host that cannot be
 * reached and one that does not answer within the time limit fail differently (502
 * `intern_unreachable` and 504 `timeout` for the caller), so both are told apart here.
 */
export class HostCallError extends Error {
  constructor(
    readonly kind: "unreachable" | "timeout",
    message: string,
  ) {
    super(message);
  }
}

export interface HostReply {
  status: number;
  body: Record<string, unknown>;
}

export interface HostEvents {
  events: AsyncIterable<RunEvent>;
  /** The host's name for this stream, for `DELETE /runs/{id}/attachments/{attachment}`. */
  attachment: string;
  /** Stops reading (the run goes on unless it was running and this was its last stream). */
  close(): void;
}

export async function hostCall(
  access: InternHostAccess,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body: unknown,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<HostReply> {
  const limit = AbortSignal.timeout(timeoutMs);
  const response = await send(access, method, path, body, timeoutMs, signal ? AbortSignal.any([limit, signal]) : limit);
  let parsed: unknown;
  try {
    parsed = await response.body.json();
  } catch (err) {
    throw failure(err, access);
  }
  return {
    status: response.statusCode,
    body: typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {},
  };
}

/** A call answered with an NDJSON event stream on 200; any other status comes back as a reply. */
export async function hostStream(
  access: InternHostAccess,
  method: "GET" | "POST",
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<HostEvents | HostReply> {
  const abort = new AbortController();
  const response = await send(access, method, path, body, timeoutMs, abort.signal);
  if (response.statusCode !== 200) {
    const parsed = (await response.body.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: response.statusCode, body: parsed };
  }
  const attachment = response.headers[ATTACHMENT_HEADER];
  return {
    events: runEvents(response.body),
    attachment: typeof attachment === "string" ? attachment : "",
    close: () => abort.abort(),
  };
}

export function isReply(value: HostEvents | HostReply): value is HostReply {
  return "status" in value;
}

async function send(
  access: InternHostAccess,
  method: string,
  path: string,
  body: unknown,
  timeoutMs: number,
  signal: AbortSignal,
) {
  try {
    return await request(`${access.origin}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${access.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: timeoutMs,
      // A run may be silent for long (a question, a slow model): only the headers are timed.
      bodyTimeout: 0,
      signal,
    });
  } catch (err) {
    throw failure(err, access);
  }
}

function failure(err: unknown, access: InternHostAccess): HostCallError {
  const timedOut =
    err instanceof undiciErrors.HeadersTimeoutError ||
    (err instanceof DOMException && err.name === "TimeoutError") ||
    (err as Error).name === "TimeoutError";
  // The origin is named, never the token.
  return timedOut
    ? new HostCallError("timeout", `the intern's host at ${access.origin} did not answer in time`)
    : new HostCallError("unreachable", `the intern's host at ${access.origin} cannot be reached`);
}

/** The NDJSON lines of a run's stream; a line cut off by a broken connection fails to parse (a severed stream). */
async function* runEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<RunEvent> {
  for await (const line of readLines(body)) yield JSON.parse(line) as RunEvent;
}

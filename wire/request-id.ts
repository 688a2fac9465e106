import { randomUUID } from "node:crypto";

/**
 * Request ids, decided once per request where it enters the gateway (the REST facade, or the
 * core's interceptor for a call over the network) and carried from there: forwarded to the core,
 * echoed in the response headers (`x-request-id`, where OpenAI's SDKs read it), in every log line of
 * the request and in its usage ledger row. A caller's own id is kept when it is safe to repeat in
 * logs and headers; anything else is replaced, never refused: a bad correlation id must not fail
 * the request it was meant to trace.
 */
export const REQUEST_ID_HEADER = "x-request-id";

/** Printable, header- and log-safe, bounded (UUIDs, ULIDs, trace-style ids and the like fit). */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The caller's id when acceptable, else a fresh one. Node may join repeated headers into one value;
 * that is replaced too.
 */
export function requestIdOf(given: string | string[] | null | undefined): string {
  return typeof given === "string" && ACCEPTED.test(given) ? given : newRequestId();
}

/**
 * A UUIDv4. Node draws these from a cached pool of random bytes (one system call per 128 ids), so
 * a fresh id costs well under a microsecond.
 */
export function newRequestId(): string {
  return randomUUID();
}

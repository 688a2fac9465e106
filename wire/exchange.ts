/**
 * One finished exchange as the gateway's observers see it: the access log, the metrics and the
 * traces all read this one record, so they can never disagree on what a request was. The REST
 * facade reports its requests (route template, HTTP status); a core interceptor reports calls
 * that arrive over gRPC, Connect or gRPC-Web (method path, status mapped to HTTP).
 */
export interface Exchange {
  protocol: "rest" | "grpc" | "connect" | "grpc-web";
  /** HTTP method for REST (`POST`); the RPC's method kind otherwise (`unary`, `server_streaming`, …). */
  method: string;
  /**
   * What was asked for, never a raw path: the REST route template (`/api/v1/batches/{id}`), the
   * RPC path (`/gateway.v1.KeysService/GetCurrentKey`), or undefined when nothing matched.
   */
  route: string | undefined;
  /**
   * HTTP status; an RPC's Connect code is mapped by the standard table (wire/errors.ts). 499 when
   * the client left before the answer ended, even if the head of the answer said 200.
   */
  status: number;
  /** From arrival to the last byte written. */
  durationMs: number;
  /** The part of `durationMs` spent waiting on providers (0 when no provider was called). */
  upstreamMs: number;
  /**
   * The gateway cut a provider's call short: the exchange ended (its client left, a deadline, the
   * gateway stopping) while a provider was still working on it (wire/upstream-watch.ts).
   */
  upstreamCancelled?: boolean;
  requestId: string;
  /**
   * The caller's key as logs may name it: its label (a masked form such as `sk-gw-v1-abc...xyz`),
   * never the secret or its hash; undefined when no key was authenticated.
   */
  keyLabel?: string;
  /** A guardrail's `flag` content filter matched the call's input (CONTENT_FLAGGED_HEADER). */
  contentFlagged?: boolean;
  /** Which key of a provider's pool answered (PROVIDER_KEY_HEADER): `<provider>/key-<n>`, never the key. */
  providerKey?: string;
}

/**
 * Set by the core on a call a `flag` content filter matched (the call went through unchanged):
 * the access line of whichever door observed the call marks it, and the caller sees it too.
 */
export const CONTENT_FLAGGED_HEADER = "x-gateway-content-flagged";

/**
 * Set by the core when a key of a provider's pool answered the call: `<provider>/key-<position>`
 * (server/engine/key-pools), for the access line; the caller sees it too.
 */
export const PROVIDER_KEY_HEADER = "x-gateway-provider-key";

/** Called once per exchange, after the answer; must not throw and must stay cheap (hot path). */
export type ExchangeObserver = (exchange: Exchange) => void;

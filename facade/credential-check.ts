import { createHash } from "node:crypto";
import { getOption, type DescMethod } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { EdgeService } from "../gen/gateway/v1/edge_pb.js";
import { Access, access } from "../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../wire/errors.js";
import { bearerTokenOf, MISSING_KEY_MESSAGE } from "../wire/bearer-token.js";

/**
 * Authentication before the body (spec 5.1, issue 16): a REST request is authenticated before its
 * body is read, its query decoded or its path variables checked, so an unauthenticated caller can
 * neither probe the validation rules nor make the gateway read and parse up to a route's limit.
 * A missing or malformed header is refused here; a key this facade has not seen lately is put to
 * the core's EdgeService.CheckCredentials once and its success remembered for `ttlMs`. The core
 * still authenticates every call itself, so a key disabled meanwhile is refused all the same —
 * the memory only spares known callers the extra call.
 */
export interface CredentialCheckOptions {
  transport: Transport;
  /** How long a success is remembered. */
  ttlMs: number;
  /** Successes remembered at most; the oldest go first. */
  maxEntries: number;
}

export type CredentialCheck = (method: DescMethod, header: Headers, signal: AbortSignal) => Promise<void>;

export function createCredentialCheck({ transport, ttlMs, maxEntries }: CredentialCheckOptions): CredentialCheck {
  /** SHA-256 of the header value → when the success expires (ms). Never the key itself. */
  const known = new Map<string, number>();
  const publicMethods = new WeakMap<DescMethod, boolean>();

  return async (method, header, signal) => {
    const authorization = header.get("authorization");
    if (authorization === null && isPublic(method)) return;
    if (!bearerTokenOf(authorization)) throw gatewayError(401, MISSING_KEY_MESSAGE);
    const digest = createHash("sha256").update(authorization!).digest("base64");
    const now = Date.now();
    if ((known.get(digest) ?? 0) > now) return;
    await transport.unary(EdgeService.method.checkCredentials, signal, undefined, header, {});
    known.delete(digest);
    if (known.size >= maxEntries) known.delete(known.keys().next().value!);
    known.set(digest, now + ttlMs);
  };

  function isPublic(method: DescMethod): boolean {
    let answer = publicMethods.get(method);
    if (answer === undefined) publicMethods.set(method, (answer = getOption(method, access) === Access.PUBLIC));
    return answer;
  }
}

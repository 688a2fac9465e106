import { createHash } from "node:crypto";
import { getOption, type DescMethod } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { EdgeService } from "../gen/gateway/v1/edge_pb.js";
import { Access, access } from "../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../wire/errors.js";
import { bearerTokenOf, MISSING_KEY_MESSAGE } from "../wire/bearer-token.js";

/**
 * Authentication before the body (docs/security.md): a REST request is authenticated before its
 * body is read, its query decoded or its path variables checked, so an unauthenticated caller can
 * neither probe the validation rules nor make the gateway read and parse up to a route's limit.
 * A missing or malformed header is refused here; a key this facade has not seen lately is put to
 * the core's EdgeService.CheckCredentials once and its success remembered for `ttlMs`. The core
 * still authenticates every call itself, so a key disabled meanwhile is refused all the same —
 * the memory only spares known callers the extra call. The check answers with the key's label,
 * remembered with the success, which the facade's access line names the caller by.
 */
export interface CredentialCheckOptions {
  transport: Transport;
  /** How long a success is remembered. */
  ttlMs: number;
  /** Successes remembered at most; the oldest go first. */
  maxEntries: number;
}

/** Resolves with the caller's key label (undefined for a public method called without a key); rejects with the 401. */
export type CredentialCheck = (method: DescMethod, header: Headers, signal: AbortSignal) => Promise<string | undefined>;

interface Remembered {
  /** When the success expires (ms). */
  until: number;
  keyLabel: string;
}

export function createCredentialCheck({ transport, ttlMs, maxEntries }: CredentialCheckOptions): CredentialCheck {
  /** SHA-256 of the header value → the success. Never the key itself. */
  const known = new Map<string, Remembered>();
  const publicMethods = new WeakMap<DescMethod, boolean>();

  return async (method, header, signal) => {
    const authorization = header.get("authorization");
    if (authorization === null && isPublic(method)) return undefined;
    if (!bearerTokenOf(authorization)) throw gatewayError(401, MISSING_KEY_MESSAGE);
    const digest = createHash("sha256").update(authorization!).digest("base64");
    const now = Date.now();
    const remembered = known.get(digest);
    if (remembered !== undefined && remembered.until > now) return remembered.keyLabel;
    const { message } = await transport.unary(EdgeService.method.checkCredentials, signal, undefined, header, {});
    known.delete(digest);
    if (known.size >= maxEntries) known.delete(known.keys().next().value!);
    known.set(digest, { until: now + ttlMs, keyLabel: message.keyLabel });
    return message.keyLabel;
  };

  function isPublic(method: DescMethod): boolean {
    let answer = publicMethods.get(method);
    if (answer === undefined) publicMethods.set(method, (answer = getOption(method, access) === Access.PUBLIC));
    return answer;
  }
}

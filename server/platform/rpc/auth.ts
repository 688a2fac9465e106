import { timingSafeEqual } from "node:crypto";
import { createContextKey, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { Access, Entitlement, access, entitlement } from "../../../gen/gateway/v1/options_pb.js";
import type { ApiKeyRow, OrganizationRow } from "../db/models.js";
import { gatewayError } from "../../../wire/errors.js";
import { hashKey } from "../secrets/key-secret.js";
import { optionOf } from "../../../wire/proto-options.js";
import { bearerTokenOf, MISSING_KEY_MESSAGE } from "../../../wire/bearer-token.js";

/**
 * Authentication and the method-level access rules of the proto (`gateway.v1.access`,
 * `gateway.v1.entitlement`), for every protocol alike. Handlers then answer only from the
 * caller's scope (see scope.ts).
 */
export interface Caller {
  key: ApiKeyRow;
  organization: OrganizationRow;
}

const callerKey = createContextKey<Caller | undefined>(undefined, { description: "authenticated caller" });

export const ENTITLEMENT_NAMES: Record<Entitlement, string | undefined> = {
  [Entitlement.UNSPECIFIED]: undefined,
  [Entitlement.INTERNS]: "interns",
  [Entitlement.PRIVATE_ENDPOINTS]: "private_endpoints",
};

/** Finds the key with this SHA-256 hash and its organization (through the governance cache). */
export type CallerLookup = (keyHash: string) => Promise<Caller | undefined>;

export function authInterceptor(operatorToken: string, findCaller: CallerLookup): Interceptor {
  const operatorDigest = hashKey(operatorToken);
  return (next) => async (req) => {
    const rule = optionOf(req.method, access);
    const header = req.header.get("authorization");
    if (rule === Access.OPERATOR) {
      // Compared as digests of equal length in constant time; API keys never pass.
      const given = hashKey(bearerToken(header));
      if (!timingSafeEqual(Buffer.from(given, "hex"), Buffer.from(operatorDigest, "hex"))) {
        throw gatewayError(
          401,
          "Invalid operator token: this operation needs the gateway operator token, not an API key",
        );
      }
      return next(req);
    }
    if (header === null && rule === Access.PUBLIC) return next(req);
    const caller = await authenticate(findCaller, header);
    if (rule === Access.MANAGEMENT && !caller.key.isManagement) {
      throw gatewayError(403, "Only management keys can perform this operation");
    }
    requireEntitlement(caller, optionOf(req.method, entitlement));
    req.contextValues.set(callerKey, caller);
    return next(req);
  };
}

function bearerToken(header: string | null): string {
  const token = bearerTokenOf(header);
  if (!token) throw gatewayError(401, MISSING_KEY_MESSAGE);
  return token;
}

async function authenticate(findCaller: CallerLookup, header: string | null): Promise<Caller> {
  const caller = await findCaller(hashKey(bearerToken(header)));
  if (!caller) throw gatewayError(401, "Invalid API key");
  if (caller.key.disabled) throw gatewayError(401, "API key is disabled");
  // Checked on every call: a cached key expires on time.
  if (caller.key.expiresAt && caller.key.expiresAt.getTime() <= Date.now())
    throw gatewayError(401, "API key has expired");
  return caller;
}

function requireEntitlement(caller: Caller, needed: Entitlement): void {
  const name = ENTITLEMENT_NAMES[needed];
  if (!name || caller.organization.entitlements.includes(name)) return;
  // Outside the interns programme the routes do not exist for the caller.
  if (needed === Entitlement.INTERNS) throw gatewayError(404, "Not found", { reason: "not_found", retryable: false });
  throw gatewayError(403, "Private endpoints are not enabled for this organization");
}

/** The authenticated caller; methods marked ACCESS_PUBLIC may have none. */
export function callerOf(ctx: HandlerContext): Caller {
  const caller = ctx.values.get(callerKey);
  if (!caller) throw gatewayError(401, MISSING_KEY_MESSAGE);
  return caller;
}

export function optionalCallerOf(ctx: HandlerContext): Caller | undefined {
  return ctx.values.get(callerKey);
}

/** The caller once authenticated, as an interceptor outside this one reads it from the call's values. */
export function callerIn(values: ContextValues): Caller | undefined {
  return values.get(callerKey);
}

import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createCredentialCheck } from "../../facade/credential-check.js";
import { Access, access } from "../../gen/gateway/v1/options_pb.js";
import { bearerTokenOf, MISSING_KEY_MESSAGE } from "../../wire/bearer-token.js";
import { gatewayError } from "../../wire/errors.js";
import { optionOf } from "../../wire/proto-options.js";
import type { Admission } from "./rpc-door.js";

/** How long, and for how many keys, a success is remembered: as the REST facade does. */
const REMEMBERED_MS = 30_000;
const REMEMBERED = 10_000;

/**
 * Which calls the RPC door refuses from their headers (rpc-door.ts): the REST facade's credential
 * check (facade/credential-check.ts), whose question is EdgeService.CheckCredentials put to the
 * core through `transport`, that is through the auth interceptor itself, so a valid key means what
 * it means to every call. A call to a method of `services` that needs a key and carries none, or
 * an unknown, disabled or expired one, is refused; a public method called without a key passes.
 * An operator method wants the operator token, which is no API key: it is refused here only when
 * it carries no bearer token at all, and the auth interceptor checks the token once the body is
 * read, within the method's limit. gRPC's own services (health, reflection) are not in `services`:
 * public, they pass.
 */
export function doorAdmission(services: readonly DescService[], transport: Transport): Admission {
  const checkCredentials = createCredentialCheck({ transport, ttlMs: REMEMBERED_MS, maxEntries: REMEMBERED });
  const guarded = new Set(services);
  return async (method: DescMethod, header: Headers, signal: AbortSignal) => {
    if (!guarded.has(method.parent)) return;
    if (optionOf(method, access) === Access.OPERATOR) {
      if (!bearerTokenOf(header.get("authorization"))) throw gatewayError(401, MISSING_KEY_MESSAGE);
      return;
    }
    await checkCredentials(method, header, signal);
  };
}

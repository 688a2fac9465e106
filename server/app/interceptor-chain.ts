import type { Interceptor } from "@connectrpc/connect";
import { authInterceptor } from "../platform/rpc/auth.js";
import { errorInterceptor } from "../platform/rpc/error-interceptor.js";
import { globalHostnameOnlyInterceptor } from "../engine/catalog/global-hostname.js";
import { validationInterceptor } from "../platform/rpc/validation.js";
import type { Deps } from "../services/deps.js";
import { regionalHostnameOf } from "../engine/governance/endpoint-policy.js";
import { observationInterceptor } from "../platform/observability/rpc-observation.js";
import type { ExchangeObserver } from "../../wire/exchange.js";

/**
 * The core's chain, outermost first: observation (request id, access log, metrics, span: calls
 * over the network only) → errors → auth → global hostname only (interns, vault) → validation →
 * handler. Assembled here, where the gateway is composed: the mechanisms of server/platform/rpc know
 * nothing of the services and stores they are given.
 */
export function coreInterceptors(
  { log, secrets, engine: { governance, catalog } }: Deps,
  observe: ExchangeObserver,
): Interceptor[] {
  return [
    observationInterceptor(observe),
    errorInterceptor(log),
    authInterceptor(secrets.operatorToken, (keyHash) => governance.caller(keyHash)),
    globalHostnameOnlyInterceptor((host) => regionalHostnameOf(catalog, host)),
    validationInterceptor(),
  ];
}

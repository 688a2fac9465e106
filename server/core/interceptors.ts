import type { Interceptor } from "@connectrpc/connect";
import type { Deps } from "../deps.js";
import { globalHostOnlyInterceptor } from "../interns/intern-global-host.js";
import { authInterceptor } from "./auth.js";
import { errorInterceptor } from "./error-interceptor.js";
import { validationInterceptor } from "./validation.js";

/** The core's chain, outermost first: errors → auth → global host only (interns, vault) → validation → handler. */
export function coreInterceptors({ log, secrets, governance, catalog }: Deps): Interceptor[] {
  return [
    errorInterceptor(log),
    authInterceptor(secrets.operatorToken, (keyHash) => governance.caller(keyHash)),
    globalHostOnlyInterceptor(catalog),
    validationInterceptor(),
  ];
}

import type { Interceptor } from "@connectrpc/connect";
import type { Deps } from "../deps.js";
import { authInterceptor } from "./auth.js";
import { errorInterceptor } from "./error-interceptor.js";
import { validationInterceptor } from "./validation.js";
import { unimplementedInterceptor, type Implementations } from "../services.js";

/** The core's chain, outermost first: errors → auth → not-yet-implemented → validation → handler. */
export function coreInterceptors({ log, secrets, governance }: Deps, impls: Implementations): Interceptor[] {
  return [errorInterceptor(log), authInterceptor(secrets.operatorToken, (keyHash) => governance.caller(keyHash)), unimplementedInterceptor(impls), validationInterceptor()];
}

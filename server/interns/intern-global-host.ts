import type { Interceptor } from "@connectrpc/connect";
import { Entitlement, entitlement } from "../../gen/gateway/v1/options_pb.js";
import type { Catalog } from "../catalog/catalog.js";
import { gatewayError } from "../core/errors.js";
import { optionOf } from "../core/proto-options.js";
import { regionalHostOf } from "../governance/endpoint-policy.js";

/**
 * Interns and the vault are served on the global hostname only (spec 4.7, 4.8): a request that
 * arrived on a regional hostname of GATEWAY_CONFIG (`regional_hosts`, the Host the facade forwards
 * as `x-forwarded-host`) is refused with 403, as inference refuses what a regional host does not
 * allow. Runs after authentication, so callers outside the programme still get its 404 first.
 */
export function globalHostOnlyInterceptor(catalog: Catalog): Interceptor {
  return (next) => async (req) => {
    if (optionOf(req.method, entitlement) !== Entitlement.INTERNS) return next(req);
    const regional = regionalHostOf(catalog, req.header.get("x-forwarded-host"));
    if (regional) {
      throw gatewayError(403, `Interns and the vault are served on the global hostname only; ${regional.host} is a regional hostname (${regional.region})`);
    }
    return next(req);
  };
}

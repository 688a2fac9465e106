import type { Interceptor } from "@connectrpc/connect";
import { global_host_only } from "../../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { optionOf } from "../../../wire/proto-options.js";

/** A regional hostname of GATEWAY_CONFIG a request arrived on, and its region. */
export interface RegionalHostname {
  hostname: string;
  region: string;
}

/**
 * Methods marked `(gateway.v1.global_host_only)` (interns and the vault) are served on the global
 * hostname only: a call that arrived on a regional hostname (the Host the facade forwards as
 * `x-forwarded-host`) is refused with 403, as inference refuses what a regional hostname does not
 * allow. Runs after authentication, so callers outside the programme still get its 404
 * first. Which hostnames are regional is the catalog's, passed in.
 */
export function globalHostnameOnlyInterceptor(
  regionalHostnameOf: (hostHeader: string | null) => RegionalHostname | null,
): Interceptor {
  return (next) => async (req) => {
    if (!optionOf(req.method, global_host_only)) return next(req);
    const regional = regionalHostnameOf(req.header.get("x-forwarded-host"));
    if (regional) {
      throw gatewayError(
        403,
        "Interns and the vault are served on the global hostname only; " +
          `${regional.hostname} is a regional hostname (${regional.region})`,
      );
    }
    return next(req);
  };
}

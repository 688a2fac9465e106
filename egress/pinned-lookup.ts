import type { LookupAddress, LookupOptions } from "node:dns";
import type { LookupFunction } from "node:net";

/**
 * A `lookup` that answers with the vetted addresses only, in the shape net.connect asks for: a
 * connection to a caller-chosen hostname reaches exactly the addresses the destination guard
 * (destination-guard.ts) let through, so DNS cannot be rebound between check and connect.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname: string, options: LookupOptions, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : undefined;
    const usable = addresses.filter((a) => family === undefined || a.family === family);
    const first = usable[0];
    if (!first) {
      callback(Object.assign(new Error("no vetted address of the requested family"), { code: "ENOTFOUND" }), "", 0);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}

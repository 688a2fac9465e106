/**
 * Response headers that split a call's time between the gateway and its providers. The core sets
 * the provider's share on inference calls (gRPC clients read it there); the REST facade turns it
 * into what the gateway itself added to the whole request, as other gateways report it.
 *
 * @module
 */

export const UPSTREAM_MS_HEADER = "x-gateway-upstream-ms";
export const OVERHEAD_MS_HEADER = "x-gateway-overhead-ms";

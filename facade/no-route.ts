import type { IncomingMessage } from "node:http";
import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../wire/errors.js";
import { BASE_ALIASES, type RouteTable } from "./route-table.js";

/** Where the API lives; every REST route but the alpha ones is under it. */
const BASE_PATH = "/api/v1";
/** A Host header as clients send it: a name or IPv4 address, or a bracketed IPv6 address, and a port. */
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The 404 of a request no route matches. A path outside `/api/` and its aliases (`/`,
 * `/chat/completions`) is nearly always a client given the gateway's address as its base URL:
 * the answer names the base URL to configure and, when the rest of the path is a route of the
 * API, the URL meant. Under `/api/` or an alias (`/v1`, route-table.ts) the path is simply unknown.
 */
export function noRouteError(
  routes: RouteTable,
  req: IncomingMessage,
  rawPath: string,
  segments: readonly string[],
): ConnectError {
  const plain = `No route for ${req.method} ${rawPath}`;
  if (segments[0] === "api" || BASE_ALIASES.some(({ alias }) => alias.every((segment, i) => segments[i] === segment)))
    return gatewayError(404, plain);
  const baseUrl = `${originOf(req)}${BASE_PATH}`;
  const meant = segments.some((segment) => segment !== "")
    ? routes.match(req.method ?? "GET", [...BASE_PATH.slice(1).split("/"), ...segments])
    : { kind: "none" as const };
  const verbs = meant.kind === "route" ? req.method : meant.kind === "wrong-verb" ? meant.allowed.join("|") : undefined;
  const hint = verbs ? ` (${verbs} ${baseUrl}/${segments.map(encodeURIComponent).join("/")})` : "";
  return gatewayError(404, `${plain}: the API's base URL is ${baseUrl}${hint}`);
}

/** The origin the client used, as far as it says; a Host that is not one is not echoed. */
function originOf(req: IncomingMessage): string {
  const host = req.headers.host;
  const scheme = req.headers["x-forwarded-proto"] === "https" ? "https" : "http";
  return `${scheme}://${host && HOST.test(host) ? host : "<host>"}`;
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../platform/logger.js";

/** What answers one of the port's own paths. */
export type PortEndpoint = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * The paths the HTTP port serves itself, beside the API and outside `/api/v1`: health, metrics,
 * the OpenAPI document and its docs page, the console. They take no API key (an endpoint may
 * protect itself, as metrics does with its optional token) and are matched before the facade, by
 * exact path or by a prefix ending in `/`. One table, so that the facade's "no route" answer and
 * every path of the port's own are decided in one place.
 */
export class PortEndpoints {
  private readonly exact = new Map<string, PortEndpoint>();
  private readonly prefixes: Array<[string, PortEndpoint]> = [];

  /** `path` is exact (`/healthz`) or, ending in `/`, a prefix (`/docs/`). */
  add(path: string, endpoint: PortEndpoint): this {
    if (path.endsWith("/") && path.length > 1) this.prefixes.push([path, endpoint]);
    else this.exact.set(path, endpoint);
    return this;
  }

  /** The exact paths served, for the start-up line that says where everything is. */
  paths(): string[] {
    return [...this.exact.keys()];
  }

  /**
   * Serves the request when one of these paths is its own, and says whether it did. An endpoint
   * that fails is logged and answered 500: it is the gateway's fault, never the caller's input.
   */
  handle(req: IncomingMessage, res: ServerResponse, log: Logger): boolean {
    const url = req.url ?? "";
    const endpoint = this.match(url);
    if (!endpoint) return false;
    Promise.resolve(endpoint(req, res)).catch((err: unknown) => {
      log.error({ err: String(err), path: url.split("?")[0] }, "port endpoint failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end();
    });
    return true;
  }

  /** The endpoint serving this request URL (query ignored), if any. */
  private match(url: string): PortEndpoint | undefined {
    const query = url.indexOf("?");
    const path = query === -1 ? url : url.slice(0, query);
    const exact = this.exact.get(path);
    if (exact) return exact;
    for (const [prefix, endpoint] of this.prefixes) if (path.startsWith(prefix)) return endpoint;
    return undefined;
  }
}

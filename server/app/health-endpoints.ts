import type { IncomingMessage, ServerResponse } from "node:http";
import type { PortEndpoint, PortEndpoints } from "./port-endpoints.js";
import type { Readiness } from "./readiness.js";

/**
 * `GET /healthz` (liveness: the process answers) and `GET /readyz` (readiness.ts: database, change
 * feed, not draining), without a key, on the HTTP port of every process kind (`--core-only` too):
 * orchestrators and load balancers probe each process. A probe is never cached by a proxy.
 */
export function addHealthEndpoints(endpoints: PortEndpoints, readiness: Readiness): void {
  endpoints.add(
    "/healthz",
    probe(() => Promise.resolve({ status: 200, body: { status: "ok" } })),
  );
  endpoints.add(
    "/readyz",
    probe(async () => {
      const { ready, checks } = await readiness.check();
      return { status: ready ? 200 : 503, body: { status: ready ? "ok" : "unavailable", checks } };
    }),
  );
}

function probe(answer: () => Promise<{ status: number; body: object }>): PortEndpoint {
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      return send(res, req, 405, {
        error: {
          code: 405,
          message: `Method ${req.method} is not allowed on ${req.url?.split("?")[0]}; allowed: GET, HEAD`,
        },
      });
    }
    const { status, body } = await answer();
    send(res, req, status, body);
  };
}

function send(res: ServerResponse, req: IncomingMessage, status: number, body: object): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    "cache-control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : json);
}

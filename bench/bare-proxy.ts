import http from "node:http";

/**
 * The baseline of the proxy benchmark: a bare node:http pass-through proxy (keep-alive to the
 * upstream, no auth, no accounting) that maps the gateway's paths (`/api/v1/…`) onto the mock's.
 * `tsx bench/bare-proxy.ts <port> <upstream base URL>`
 */
const [port = "0", upstream = ""] = process.argv.slice(2);
const target = new URL(upstream);
// No cap on sockets, as node's default agent and the gateway's own pools: a burst of thousands of
// streams is then limited by the proxy's work, not by a queue for connections.
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((req, res) => {
  const out = http.request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: `${target.pathname}${(req.url ?? "").replace(/^\/api\/v1/, "")}`,
      headers: { ...req.headers, host: target.host },
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on("error", () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(out);
});
// The gateway's default accept queue (GATEWAY_LISTEN_BACKLOG), so a burst meets the same kernel queue at both.
server.listen({ port: Number(port), host: "127.0.0.1", backlog: 4_096 }, () =>
  console.log(`listening ${(server.address() as { port: number }).port}`),
);

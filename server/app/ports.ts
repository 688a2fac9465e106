import type http from "node:http";
import type http2 from "node:http2";
import net, { type AddressInfo } from "node:net";

/** A listening port and the setting that chooses it, so that a failure to bind names what to change. */
export interface PortSetting {
  setting: "PORT" | "GRPC_PORT";
  port: number;
}

/**
 * Binds every fixed port once and lets it go, before the database is opened or migrated: a port
 * held by another process stops the start at once, naming its setting, instead of after migrations
 * (and the embedded PostgreSQL's start) have run. Port 0 (any free port) cannot conflict. The real
 * listeners bind the same ports moments later; a process that takes one in between still gets the
 * same message from `listenOn`.
 */
export async function checkPortsFree(host: string, ports: readonly PortSetting[]): Promise<void> {
  const fixed = ports.filter(({ port }) => port !== 0);
  for (const [i, a] of fixed.entries()) {
    const b = fixed.slice(i + 1).find(({ port }) => port === a.port);
    if (b)
      throw new Error(`${a.setting} and ${b.setting} are both ${a.port}: the HTTP and gRPC listeners need a port each`);
  }
  const held: net.Server[] = [];
  try {
    for (const { setting, port } of fixed) {
      const probe = net.createServer();
      await listenOn(probe, { setting, port }, host);
      held.push(probe);
    }
  } finally {
    await Promise.all(held.map((probe) => new Promise<void>((resolve) => probe.close(() => resolve()))));
  }
}

/**
 * `server.listen`, with a refused port turned into a message that names the port's setting.
 * `backlog` is the accept queue's length (GATEWAY_LISTEN_BACKLOG); Node's default when not given.
 */
export function listenOn(
  server: net.Server | http.Server | http2.Http2Server,
  { setting, port }: PortSetting,
  host: string,
  backlog?: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) =>
      reject(new Error(bindFailure(err, setting, port, host), { cause: err }));
    server.once("error", failed);
    server.listen({ port, host, backlog }, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

function bindFailure(err: NodeJS.ErrnoException, setting: string, port: number, host: string): string {
  const where = `${host}:${port}`;
  switch (err.code) {
    case "EADDRINUSE":
      return (
        `port ${port} is in use (${setting}): another process holds it, so ${where} cannot be bound; ` +
        `stop that process or set ${setting} to a free port`
      );
    case "EACCES":
      return (
        `port ${port} may not be bound by this user (${setting}): ` +
        `choose a port above 1023 with ${setting}, or grant the right to bind it`
      );
    case "EADDRNOTAVAIL":
      return `cannot listen on ${where} (${setting}, HOST): ${host} is not an address of this machine`;
    default:
      return `cannot listen on ${where} (${setting}): ${err.message}`;
  }
}

/** The URL a client on this machine reaches a listener at (a wildcard address becomes loopback). */
export function urlOf(server: net.Server | http.Server | http2.Http2Server): string {
  const { address, port, family } = server.address() as AddressInfo;
  const host = address === "0.0.0.0" || address === "::" ? "127.0.0.1" : family === "IPv6" ? `[${address}]` : address;
  return `http://${host}:${port}`;
}

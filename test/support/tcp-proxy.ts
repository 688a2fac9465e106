import net, { type AddressInfo } from "node:net";

/**
 * A TCP relay in front of a server (PostgreSQL, in the tests that use it) that can make chosen
 * connections go silent: their bytes are dropped both ways while both sockets stay open, which is
 * how a connection looks from either end when the path between them dies without a word.
 */
export interface TcpProxy {
  port: number;
  /** Silences the open connections whose client has sent something `chosen` accepts; answers how many. */
  silence(chosen: (sentByClient: string) => boolean): number;
  close(): Promise<void>;
}

interface Relay {
  client: net.Socket;
  server: net.Socket;
  /** What the client has sent so far, as latin1, kept short: enough to recognize a connection. */
  sent: string;
  silent: boolean;
}

const SENT_KEPT = 64 * 1024;

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const relays = new Set<Relay>();
  const proxy = net.createServer((client) => {
    const server = net.connect(target.port, target.host);
    const relay: Relay = { client, server, sent: "", silent: false };
    relays.add(relay);
    client.on("data", (bytes) => {
      if (relay.sent.length < SENT_KEPT) relay.sent += bytes.toString("latin1");
      if (!relay.silent) server.write(bytes);
    });
    server.on("data", (bytes) => {
      if (!relay.silent) client.write(bytes);
    });
    const end = () => {
      relays.delete(relay);
      client.destroy();
      server.destroy();
    };
    client.on("close", end).on("error", end);
    server.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    port: (proxy.address() as AddressInfo).port,
    silence(chosen) {
      let count = 0;
      for (const relay of relays) {
        if (relay.silent || !chosen(relay.sent)) continue;
        relay.silent = true;
        count++;
      }
      return count;
    },
    async close() {
      for (const relay of relays) {
        relay.client.destroy();
        relay.server.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

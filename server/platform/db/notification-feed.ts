import pg from "pg";
import type { Logger } from "../logger.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * One LISTEN connection per instance for PostgreSQL's notifications, shared by whoever needs word
 * from the other instances: governance changes (server/engine/governance/governance-changes.ts)
 * and key pool health (server/engine/key-pools/pool-sharing.ts). While the connection is down the
 * feed is not `live`, and what was said meanwhile is lost: subscribers hear `onConnected` after
 * each (re)connection and decide what that means for them.
 *
 * A connection can also die without a word (a dropped route, a failed-over database, a NAT that
 * forgot it): no error, no end, and no notification ever again. So the feed asks its own
 * connection a question every `checkMs` and counts it lost when no answer comes within as long,
 * and TCP keepalive lets the kernel notice a dead peer too. A notification sent elsewhere thus
 * reaches this instance within about 2 × `checkMs` plus a reconnect even then (docs/operating.md).
 */
export interface NotificationFeed {
  /**
   * Hands every payload sent on `channel` to `handler`, from now on (and `onConnected` says when
   * some may have been missed).
   */
  subscribe(channel: string, handler: (payload: string) => void): void;
  /**
   * Tells every instance (this one included) `payload` on `channel`, through the feed's own
   * connection; best effort: while the feed is down it is dropped.
   */
  notify(channel: string, payload: string): void;
  /** Called after every successful (re)connection, the first included. */
  onConnected(handler: () => void): void;
  live(): boolean;
  stop(): Promise<void>;
}

const RECONNECT_MS = 1_000;
/** Channel names are identifiers in LISTEN; ours are fixed lowercase words. */
const CHANNEL = /^[a-z_]+$/;

/**
 * Opens the feed; resolves once the first connection attempt is over (a failed one keeps retrying
 * in the background).
 */
export async function openNotificationFeed(
  databaseUrl: string,
  log: Logger,
  checkMs: number,
): Promise<NotificationFeed> {
  const handlers = new Map<string, Array<(payload: string) => void>>();
  const connectedHandlers: Array<() => void> = [];
  let client: pg.Client | undefined;
  let connected = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let check: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({
      connectionString: databaseUrl,
      keepAlive: true,
      keepAliveInitialDelayMillis: checkMs,
      connectionTimeoutMillis: checkMs,
    });
    next.on("notification", (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? "");
    });
    next.on("error", (err) => {
      log.warn({ err: err.message }, "database notification feed lost; reconnecting");
      drop(next);
    });
    next.on("end", () => drop(next));
    client = next;
    try {
      await next.connect();
      for (const channel of handlers.keys()) await next.query(`LISTEN ${channel}`);
      if (client !== next || closed) return;
      connected = true;
      for (const handler of connectedHandlers) handler();
      check = setTimeout(() => void stillThere(next), checkMs);
    } catch (err) {
      log.warn({ err: errorMessage(err) }, "database notification feed could not connect");
      drop(next);
    }
  };
  const stillThere = async (which: pg.Client) => {
    let timer: NodeJS.Timeout | undefined;
    const silence = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${checkMs} ms`)), checkMs);
    });
    try {
      await Promise.race([which.query("SELECT 1"), silence]);
      if (client === which) check = setTimeout(() => void stillThere(which), checkMs);
    } catch (err) {
      if (client !== which) return;
      log.warn({ err: errorMessage(err) }, "database notification feed lost; reconnecting");
      drop(which);
    } finally {
      clearTimeout(timer);
    }
  };
  const drop = (which: pg.Client) => {
    if (client !== which) return;
    clearTimeout(check);
    connected = false;
    client = undefined;
    void which.end().catch(() => undefined);
    if (!closed) retry = setTimeout(() => void connect(), RECONNECT_MS);
  };

  await connect();
  return {
    subscribe(channel, handler) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      const known = handlers.get(channel);
      if (known) known.push(handler);
      else {
        handlers.set(channel, [handler]);
        // Already connected: listen now; a connection still being made listens to every channel once up.
        if (connected)
          void client
            ?.query(`LISTEN ${channel}`)
            .catch((err: unknown) =>
              log.warn({ err: errorMessage(err) }, "database notification feed could not listen"),
            );
      }
    },
    notify(channel, payload) {
      if (!connected) return;
      void client
        ?.query("SELECT pg_notify($1, $2)", [channel, payload])
        .catch((err: unknown) => log.warn({ err: errorMessage(err) }, "database notification feed could not notify"));
    },
    onConnected(handler) {
      connectedHandlers.push(handler);
    },
    live: () => connected,
    async stop() {
      closed = true;
      clearTimeout(retry);
      clearTimeout(check);
      const last = client;
      client = undefined;
      connected = false;
      await last?.end().catch(() => undefined);
    },
  };
}

import pg from "pg";
import type { Sequelize, Transaction } from "sequelize";
import { GOVERNANCE_TABLES } from "../../platform/db/migrations/0004-governance-notify.js";
import type { Logger } from "../../platform/logger.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * The feed that tells an instance that governance data changed, from two sources:
 * - this process's own writes, through Sequelize hooks, after their transaction commits (so the
 *   next request after an admin call that changed a guardrail already sees it);
 * - every instance's writes, through LISTEN on the channel the triggers of migration 0004 notify.
 * While the LISTEN connection is down the feed is not `live`: the cache serves what it loaded
 * before, up to its TTL, and stores nothing new (a change could be missed). Reconnecting counts as
 * a change.
 *
 * A connection can also die without a word (a dropped route, a failed-over database, a NAT that
 * forgot it): no error, no end, and no notification ever again. So the feed asks its own
 * connection a question every `checkMs` and counts it lost when no answer comes within as long,
 * and TCP keepalive lets the kernel notice a dead peer too. A change made elsewhere thus reaches
 * this instance within about 2 × `checkMs` plus a reconnect even then (docs/operating.md).
 */
export interface GovernanceChanges {
  live(): boolean;
  close(): Promise<void>;
}

const CHANNEL = "gateway_governance";
const RECONNECT_MS = 1_000;
/** Writes to any other table do not concern governance. */
const TABLES = new Set(GOVERNANCE_TABLES);
const WRITE_HOOKS = ["afterCreate", "afterUpdate", "afterDestroy", "afterUpsert", "afterBulkCreate", "afterBulkUpdate", "afterBulkDestroy"] as const;

/** Resolves once the first LISTEN attempt is over (a failed one keeps retrying in the background). */
export async function watchGovernanceChanges(sequelize: Sequelize, databaseUrl: string, log: Logger, checkMs: number, onChange: () => void): Promise<GovernanceChanges> {
  for (const hook of WRITE_HOOKS) {
    sequelize.addHook(hook, "governance-changes", function (this: { getTableName(): string | { tableName: string } }, ...args: unknown[]) {
      const table = this.getTableName();
      if (!TABLES.has(typeof table === "string" ? table : table.tableName)) return;
      const transaction = (args.at(-1) as { transaction?: Transaction | null } | undefined)?.transaction;
      if (transaction) transaction.afterCommit(onChange);
      else onChange();
    });
  }

  let client: pg.Client | undefined;
  let connected = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  let check: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({ connectionString: databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: checkMs, connectionTimeoutMillis: checkMs });
    next.on("notification", onChange);
    next.on("error", (err) => {
      log.warn({ err: err.message }, "governance change feed lost; cached governance is bypassed until it is back");
      drop(next);
    });
    next.on("end", () => drop(next));
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANNEL}`);
      if (client !== next || closed) return;
      connected = true;
      // Whatever changed while no one listened.
      onChange();
      check = setTimeout(() => void stillThere(next), checkMs);
    } catch (err) {
      log.warn({ err: errorMessage(err) }, "governance change feed could not connect");
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
      log.warn({ err: errorMessage(err) }, "governance change feed lost; cached governance is bypassed until it is back");
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
    // No new generation here: entries loaded before the feed went down stay servable until their
    // TTL (the staleness bound the cache already has), so a database outage does not stop calls
    // that held leases cover. Reconnecting starts a new generation.
    void which.end().catch(() => undefined);
    if (!closed) retry = setTimeout(() => void connect(), RECONNECT_MS);
  };
  await connect();

  return {
    live: () => connected,
    async close() {
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

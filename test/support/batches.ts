import pg from "pg";
import { eventually } from "./eventually.js";
import { at, call, type Reply } from "./http.js";

/** Engine settings that keep batch tests fast: short polls, leases and retry delays. */
export const FAST_ENGINE = {
  GATEWAY_BATCH_POLL_MS: "20",
  GATEWAY_BATCH_LEASE_MS: "2000",
  GATEWAY_BATCH_RETRY_BASE_MS: "50",
};

export const TERMINAL = ["completed", "failed", "expired", "cancelled"];

export function chatItems(
  count: number,
  model = "mock/chat",
  prefix = "item",
): { custom_id: string; body: Record<string, unknown> }[] {
  return Array.from({ length: count }, (_, i) => ({
    custom_id: `${prefix}-${i}`,
    body: { model, messages: [{ role: "user", content: `Question number ${i}` }], max_tokens: 16 },
  }));
}

/** How many requests of `chatItems` the mock upstream received. */
export function itemCallsSeen(upstream: { requests: { body: unknown }[] }): number {
  return upstream.requests.filter((r) => JSON.stringify(r.body).includes("Question number")).length;
}

export function submit(
  base: string,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(base, "POST", "/api/v1/batches", { key, body, headers });
}

/**
 * Reads the batch until it is terminal; any answer but 200 comes back at once for the test to
 * judge, except 503, which a gateway whose database is restarting answers meanwhile.
 */
export function waitTerminal(base: string, key: string, id: string): Promise<Reply> {
  return eventually(() => call(base, "GET", `/api/v1/batches/${id}`, { key }), `batch ${id} ends`, {
    until: (res) => res.status !== 503 && (res.status !== 200 || TERMINAL.includes(String(at(res.body, "status")))),
  });
}

/** Ledger rows of a batch's items, straight from the database. */
export async function batchLedger(
  databaseUrl: string,
  batchId: string,
): Promise<{ generation_id: string; status: string; cost_usd: string }[]> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ generation_id: string; status: string; cost_usd: string }>(
      "SELECT generation_id, status, cost_usd::text AS cost_usd " +
        "FROM usage_ledger WHERE batch_id = $1 ORDER BY generation_id",
      [batchId],
    );
    return rows;
  } finally {
    await client.end();
  }
}

export async function sql(databaseUrl: string, text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * Records from now on which gateway process finished each batch item of the database: the item's
 * lease owner (`host:pid:suffix`) at the moment its result is written. Settlement applies only
 * under the writer's own lease and clears it, so the gateway's tables keep no trace of it after.
 */
export async function recordItemFinishers(databaseUrl: string): Promise<void> {
  await sql(
    databaseUrl,
    `CREATE TABLE IF NOT EXISTS test_item_finishers (batch_id text NOT NULL, idx integer NOT NULL, owner text);
     CREATE OR REPLACE FUNCTION test_record_item_finisher() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       INSERT INTO test_item_finishers VALUES (NEW.batch_id, NEW.idx, OLD.lease_owner);
       RETURN NEW;
     END $$;
     CREATE OR REPLACE TRIGGER test_item_finishers AFTER UPDATE OF state ON batch_items
       FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state = 'done') EXECUTE FUNCTION test_record_item_finisher();`,
  );
}

/** Items of the batch finished by each process (by pid) since `recordItemFinishers`. */
export async function itemsFinishedByPid(databaseUrl: string, batchId: string): Promise<Map<number, number>> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ owner: string | null; items: number }>(
      "SELECT owner, count(*)::int AS items FROM test_item_finishers WHERE batch_id = $1 GROUP BY owner",
      [batchId],
    );
    // A lease owner ends with the process id and a random suffix (server/platform/workers/lease-owner.ts).
    return new Map(rows.map((row) => [Number(row.owner?.split(":").at(-2)), row.items]));
  } finally {
    await client.end();
  }
}

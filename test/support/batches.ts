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

export function chatItems(count: number, model = "mock/chat", prefix = "item"): { custom_id: string; body: Record<string, unknown> }[] {
  return Array.from({ length: count }, (_, i) => ({
    custom_id: `${prefix}-${i}`,
    body: { model, messages: [{ role: "user", content: `Question number ${i}` }], max_tokens: 16 },
  }));
}

/** How many requests of `chatItems` the mock upstream received. */
export function itemCallsSeen(upstream: { requests: { body: unknown }[] }): number {
  return upstream.requests.filter((r) => JSON.stringify(r.body).includes("Question number")).length;
}

export function submit(base: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Reply> {
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
export async function batchLedger(databaseUrl: string, batchId: string): Promise<{ generation_id: string; status: string; cost_usd: string }[]> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ generation_id: string; status: string; cost_usd: string }>(
      "SELECT generation_id, status, cost_usd::text AS cost_usd FROM usage_ledger WHERE batch_id = $1 ORDER BY generation_id",
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

import pg from "pg";
import { at, call, type Reply } from "./http.js";

/** Engine settings that keep batch tests fast: short polls, leases and retry delays. */
export const FAST_ENGINE = {
  GATEWAY_BATCH_POLL_MS: "20",
  GATEWAY_BATCH_LEASE_MS: "2000",
  GATEWAY_BATCH_RETRY_BASE_MS: "50",
};

export const TERMINAL = ["completed", "failed", "expired", "cancelled"];

/** Only a guard so that a stuck batch fails the test instead of hanging it. */
const TERMINAL_GUARD_MS = 60_000;

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

export async function waitTerminal(base: string, key: string, id: string): Promise<Reply> {
  const deadline = Date.now() + TERMINAL_GUARD_MS;
  for (;;) {
    const res = await call(base, "GET", `/api/v1/batches/${id}`, { key });
    if (res.status !== 200 && res.status !== 503) return res;
    if (res.status === 200 && TERMINAL.includes(String(at(res.body, "status")))) return res;
    if (Date.now() > deadline) throw new Error(`batch ${id} did not finish: ${res.text.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
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

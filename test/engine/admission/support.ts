import { QueryTypes, type Sequelize } from "sequelize";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../support/http.js";

/** Shared by the admission suites: keys, calls, and the central side of a key's credit limit. */
export const HELLO = [{ role: "user", content: "Hi there" }];
/** One call on chat-a with max_tokens 3 and the mock's usage of 7 + 3 tokens costs at most this. */
export const CALL_USD = 0.000013;
export const ONE_CALL = { model: "mock/chat", messages: HELLO, provider: { only: ["mockai"] }, max_tokens: 3 };

export function chat(base: string, key: string, body: Record<string, unknown> = {}): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", { key, body: { ...ONE_CALL, ...body } });
}

export async function newKey(
  base: string,
  managementKey: string,
  body: Record<string, unknown> = {},
): Promise<{ key: string; hash: string }> {
  const res = await call(base, "POST", "/api/v1/keys", {
    key: managementKey,
    body: { name: `k-${Math.random().toString(36).slice(2)}`, ...body },
  });
  assert.is(res.status, 201, res.text);
  return { key: String(at(res.body, "key")), hash: String(at(res.body, "data", "hash")) };
}

export interface CentralSpend {
  /** Settled lifetime spend of the key. */
  spent: number;
  /** What the key's lifetime counter has leased to instances and still counts. */
  leased: number;
  ledgerRows: number;
}

export async function centralSpend(sequelize: Sequelize, hash: string): Promise<CentralSpend> {
  const [row] = await sequelize.query<{ spent: string; leased: string; rows: string }>(
    `SELECT (SELECT coalesce(sum(spent_usd), 0) FROM usage_counters
              WHERE scope = 'key' AND scope_id = :hash AND period = 'lifetime')::text AS spent,
            (SELECT coalesce(sum(granted), 0) FROM admission_leases
              WHERE quantity = :quantity AND held_until > now())::text AS leased,
            (SELECT count(*) FROM usage_ledger WHERE key_hash = :hash)::text AS rows`,
    { type: QueryTypes.SELECT, replacements: { hash, quantity: `key:${hash}:lifetime` } },
  );
  return { spent: Number(row!.spent), leased: Number(row!.leased), ledgerRows: Number(row!.rows) };
}

/** Exact decimals compared as floats: a margin far below any price. */
export const EPSILON = 1e-12;

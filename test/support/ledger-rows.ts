import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { eventually } from "./eventually.js";
import type { TestGateway } from "./gateway.js";

/** The usage_ledger columns request-path tests assert on. */
export interface LedgerRow {
  generation_id: string;
  status: "success" | "error" | "cancelled";
  http_status: number;
  model_id: string;
  provider_slug: string | null;
  endpoint_id: string | null;
  session_id: string | null;
  end_user: string | null;
  streamed: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  /** Of prompt_tokens, read from the provider's prompt cache. */
  cached_tokens: number;
  /** Of prompt_tokens, written to the provider's prompt cache. */
  cache_write_tokens: number;
  content_flagged: boolean;
  cost_usd: string;
  request_id: string | null;
}

const COLUMNS =
  "generation_id, status, http_status, model_id, provider_slug, endpoint_id, session_id, end_user, streamed, " +
  "prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, content_flagged, " +
  "cost_usd::text AS cost_usd, request_id";

/** Rows of one generation, oldest first (failed attempts before the one that answered). */
export async function ledgerRowsOf(gw: TestGateway, generationId: string): Promise<LedgerRow[]> {
  // Settlement is written behind: what the gateway has queued is committed first.
  await gw.gateway.deps.engine.settlement.barrier();
  return gw.gateway.sequelize.query<LedgerRow>(
    `SELECT ${COLUMNS} FROM usage_ledger WHERE generation_id = :generationId ORDER BY created_at, id`,
    {
      type: QueryTypes.SELECT,
      replacements: { generationId },
    },
  );
}

/** Every row, oldest first: for calls whose generation id the client never saw (cut, cancelled, refused). */
export async function allLedgerRows(gw: TestGateway): Promise<LedgerRow[]> {
  await gw.gateway.deps.engine.settlement.barrier();
  return gw.gateway.sequelize.query<LedgerRow>(`SELECT ${COLUMNS} FROM usage_ledger ORDER BY created_at, id`, {
    type: QueryTypes.SELECT,
  });
}

/**
 * Reads the ledger until `found` picks a row: a call the client abandoned is settled after the
 * client has gone, so there is nothing to await but the row itself.
 */
export async function waitForLedgerRow(gw: TestGateway, found: (row: LedgerRow) => boolean): Promise<LedgerRow> {
  const rows = await eventually(() => allLedgerRows(gw), "a matching usage_ledger row is written", {
    until: (now) => now.some(found),
  });
  return rows.find(found)!;
}

/** The one successful ledger row of a translated (Responses / Messages) call, with its token counts. */
export async function assertOneSuccessRow(
  gw: TestGateway,
  generationId: string,
  expected: { streamed: boolean; promptTokens: number; completionTokens: number },
): Promise<void> {
  const rows = await ledgerRowsOf(gw, generationId);
  assert.is(rows.length, 1);
  assert.is(rows[0]!.status, "success");
  assert.is(rows[0]!.streamed, expected.streamed);
  assert.is(rows[0]!.prompt_tokens, expected.promptTokens);
  assert.is(rows[0]!.completion_tokens, expected.completionTokens);
  assert.ok(Number(rows[0]!.cost_usd) > 0);
}

import { randomUUID } from "node:crypto";
import * as assert from "uvu/assert";
import { settleCall, type CallRecord } from "../../../server/engine/usage/usage-store.js";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";

/** What the analytics suites share: the gateway, its organization and workspace, the two ledger keys, a plain key. */
export interface AnalyticsCtx {
  gw: TestGateway;
  organizationId: string;
  workspaceId: string;
  keyA: string;
  keyB: string;
  plain: string;
  other: { organizationId: string; workspaceId: string; key: string };
}

export type Json = Record<string, unknown>;
export const QUERY = "/api/v1/analytics/query";
export const MARCH = { start: "2024-03-01T00:00:00Z", end: "2024-04-01T00:00:00Z" };
/** Every metric callers may ask for, by the name they use. */
export const METRIC_NAMES = [
  "requests",
  "prompt_tokens",
  "completion_tokens",
  "reasoning_tokens",
  "cached_tokens",
  "cache_write_tokens",
  "total_tokens",
  "cost_usd",
  "byok_cost_usd",
  "cache_hits",
  "cache_savings_usd",
  "avg_latency_ms",
  "p95_latency_ms",
  "error_rate",
  "tokens_per_second",
];

function record(
  base: Pick<CallRecord, "organizationId" | "keyHash" | "workspaceId">,
  fields: Partial<CallRecord>,
): CallRecord {
  return {
    generationId: `gen-${randomUUID()}`,
    memberUserId: null,
    endUser: null,
    sessionId: null,
    api: "chat",
    modelId: "acme/small",
    providerSlug: "acme",
    endpointId: null,
    status: "success",
    httpStatus: 200,
    streamed: false,
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    costUsd: "0",
    isByok: false,
    isFree: false,
    latencyMs: null,
    generationMs: null,
    reservationId: null,
    ...base,
    ...fields,
  };
}

/**
 * Starts the test gateway and writes the ledger rows the analytics suites query: March 2024 on two keys, calls of
 * the last days, another organization's calls on the same days.
 */
export async function startAnalyticsGateway(ctx: AnalyticsCtx): Promise<void> {
  ctx.gw = await startTestGateway();
  const own = await call(ctx.gw.url, "GET", "/api/v1/key", { key: ctx.gw.key });
  ctx.organizationId = at(own.body, "data", "organization_id") as string;
  ctx.workspaceId = at(own.body, "data", "workspace_id") as string;
  const created = await call(ctx.gw.url, "POST", "/api/v1/keys", {
    key: ctx.gw.key,
    body: { name: "analytics-plain" },
  });
  ctx.plain = at(created.body, "key") as string;
  ctx.keyA = "a".repeat(64);
  ctx.keyB = "b".repeat(64);
  ctx.other = await seedOrganization("analytics-other-org");

  const mine = (keyHash: string) => ({ organizationId: ctx.organizationId, keyHash, workspaceId: ctx.workspaceId });
  const rows: Array<[CallRecord, string]> = [
    [
      record(mine(ctx.keyA), {
        modelId: "acme/small",
        promptTokens: 100,
        completionTokens: 50,
        costUsd: "0.01",
        latencyMs: 100,
        generationMs: 1000,
        memberUserId: "user_1",
        endUser: "alice",
      }),
      "2024-03-04T10:00:00Z",
    ],
    [
      record(mine(ctx.keyA), {
        modelId: "acme/small",
        providerSlug: "beta",
        status: "error",
        httpStatus: 502,
        promptTokens: 100,
        latencyMs: 300,
      }),
      "2024-03-04T11:30:00Z",
    ],
    [
      record(mine(ctx.keyB), {
        modelId: "acme/large",
        promptTokens: 200,
        cachedTokens: 120,
        cacheWriteTokens: 30,
        completionTokens: 100,
        costUsd: "0.05",
        isByok: true,
        latencyMs: 200,
        generationMs: 2000,
        endUser: "bob",
      }),
      "2024-03-05T09:00:00Z",
    ],
    [
      record(mine(ctx.keyB), {
        modelId: "acme/embed",
        api: "embeddings",
        promptTokens: 1000,
        costUsd: "0.001",
        latencyMs: 50,
        generationMs: 60,
      }),
      "2024-03-05T09:45:00Z",
    ],
    [
      record(mine(ctx.keyA), {
        modelId: "acme/large",
        providerSlug: null,
        status: "cancelled",
        httpStatus: 499,
        promptTokens: 10,
        completionTokens: 5,
        costUsd: "0.002",
      }),
      "2024-03-11T08:00:00Z",
    ],
    // Outside March, and in the last 30 days.
    [record(mine(ctx.keyA), { modelId: "acme/old", costUsd: "7" }), "2024-02-29T23:59:59Z"],
    [
      record(mine(ctx.keyA), { modelId: "acme/recent", costUsd: "0.5" }),
      new Date(Date.now() - 3_600_000).toISOString(),
    ],
    [
      record(mine(ctx.keyA), { modelId: "acme/recent", costUsd: "0.25" }),
      new Date(Date.now() - 40 * 86_400_000).toISOString(),
    ],
    // Another organization's calls, on the same days and models.
    [
      record(
        { organizationId: ctx.other.organizationId, keyHash: "c".repeat(64), workspaceId: ctx.other.workspaceId },
        { modelId: "acme/small", costUsd: "100", promptTokens: 9999 },
      ),
      "2024-03-04T10:00:00Z",
    ],
    [
      record(
        { organizationId: ctx.other.organizationId, keyHash: "c".repeat(64), workspaceId: ctx.other.workspaceId },
        { modelId: "acme/recent", costUsd: "100" },
      ),
      new Date(Date.now() - 3_600_000).toISOString(),
    ],
  ];
  for (const [row, when] of rows) await settleCall(ctx.gw.gateway.sequelize, row, new Date(when));
}

export async function query(gw: TestGateway, body: Json, key = gw.key): Promise<Json[]> {
  const res = await call(gw.url, "POST", QUERY, { key, body });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data") as Json[];
}

export function assertError(res: Reply, status: number, message: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.match(String(at(res.body, "error", "message")), message, context);
}

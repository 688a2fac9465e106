import type { Interval } from "../money/budget-periods.js";
import { nextReset } from "../money/budget-periods.js";
import type { ApiKeyRow } from "../../platform/db/models.js";
import type { ApplyingGuardrail } from "../governance/applying-guardrails.js";
import { type BudgetKey, budgetLayers, currentPeriodStart } from "../usage/budget-layers.js";
import type { RateLimitColumns } from "./rate-limit-settings.js";

/**
 * The limited quantities one inference call draws on, each leased separately (lease-book.ts):
 * the key's window of the gateway's default rate limit, the requests and tokens per minute of
 * the key and of its workspace (their `svc_rate_limit`), its free-model day (free calls only),
 * and every spend counter a budget layer reads. Layers that read the same counter (a key's daily
 * credit limit and a daily guardrail budget) share one quantity with several limits, so one lease
 * covers them all.
 */
export type Refusal = "rate_limit" | "free_quota" | "budget";

/**
 * Which rate limit a quantity is: its 429 names it, and the metrics and the ledger group refusals
 * by it (`free_model_requests` is the free-model day's, which is no rate window).
 */
export type RateLimitName =
  | "gateway_requests"
  | "key_requests"
  | "key_tokens"
  | "workspace_requests"
  | "workspace_tokens";
export type LimitName = RateLimitName | "free_model_requests";
export const LIMIT_NAMES: readonly LimitName[] = [
  "gateway_requests",
  "key_requests",
  "key_tokens",
  "workspace_requests",
  "workspace_tokens",
  "free_model_requests",
];

export interface QuantityLimit {
  /** Requests, or USD as an exact decimal. */
  limit: string;
  /** Whether BYOK spend counts against it (spend only). */
  includeByok: boolean;
  /** Names the limit in a refusal. */
  label: string;
}

export interface Quantity {
  /**
   * admission_leases.quantity: `rate:<hash>`, `rate:key:<hash>:requests|tokens`,
   * `rate:workspace:<id>:requests|tokens`, `free:<hash>`, `key:<hash>:<period>`,
   * `workspace:<id>:<period>`. Request and token counters all start with `rate:` or `free:`, the
   * names whose settlement goes to `request_counters` (usage-store.ts).
   */
  name: string;
  windowStart: Date;
  /** The lease cannot outlive its window; null for lifetime counters. */
  windowEnd: Date | null;
  /** Units: whole requests, whole tokens (prompt and completion), or USD. */
  kind: "requests" | "tokens" | "spend";
  /** usage_counters address (spend only). */
  scope: "key" | "workspace" | null;
  scopeId: string;
  period: Interval | null;
  limits: QuantityLimit[];
  refusal: Refusal;
  /** The rate limit this quantity is; null for the free-model day and spend. */
  rateLimit: RateLimitName | null;
  /** The lock group a grant runs under: the workspace, and the key unless the quantity is the workspace's. */
  keyHash: string | null;
  workspaceId: string;
}

export interface QuantityLimits {
  rateLimitRequests: number;
  rateLimitWindowSeconds: number;
  /**
   * The window `svc_rate_limit`'s per-minute limits are counted in
   * (GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS); a minute when not said.
   */
  rateLimitMinuteWindowSeconds?: number;
  freeModelDailyRequests: number;
}

/**
 * What a call's quantities are read from: the key and what governs it, as plain data (a
 * CallerContext is one), so that the table test builds them without a database.
 */
export interface QuantitySource {
  caller: { key: BudgetKey & Pick<ApiKeyRow, "workspaceId"> & Partial<RateLimitColumns> };
  guardrails: readonly ApplyingGuardrail[];
  workspaceBudgets: Parameters<typeof budgetLayers>[2];
  workspace: Parameters<typeof budgetLayers>[3] & Partial<RateLimitColumns>;
}

const MINUTE_S = 60;

export function quantitiesFor(context: QuantitySource, limits: QuantityLimits, free: boolean, now: Date): Quantity[] {
  const { key } = context.caller;
  const quantities: Quantity[] = [];
  const counted = (
    name: string,
    kind: "requests" | "tokens",
    window: { start: Date; end: Date },
    limit: number,
    label: string,
    refusal: Refusal,
    rateLimit: RateLimitName | null,
    keyHash: string | null,
  ): Quantity => ({
    name,
    windowStart: window.start,
    windowEnd: window.end,
    kind,
    scope: null,
    scopeId: keyHash ?? key.workspaceId,
    period: null,
    limits: [{ limit: String(limit), includeByok: false, label }],
    refusal,
    rateLimit,
    keyHash,
    workspaceId: key.workspaceId,
  });
  if (limits.rateLimitRequests > 0) {
    const window = fixedWindow(now, limits.rateLimitWindowSeconds * 1000);
    quantities.push(
      counted(
        `rate:${key.hash}`,
        "requests",
        window,
        limits.rateLimitRequests,
        "rate limit",
        "rate_limit",
        "gateway_requests",
        key.hash,
      ),
    );
  }
  // A minute, or a shorter window each per-minute limit is scaled to (rounded down, at least 1).
  const windowS = limits.rateLimitMinuteWindowSeconds ?? MINUTE_S;
  const minute = fixedWindow(now, windowS * 1000);
  const scaled = (perMinute: number) => Math.max(1, Math.floor((perMinute * windowS) / MINUTE_S));
  const perMinute = (
    owner: "key" | "workspace",
    id: string,
    columns: Partial<RateLimitColumns>,
    keyHash: string | null,
  ) => {
    const { rateLimitRequestsPerMinute: requests, rateLimitTokensPerMinute: tokens } = columns;
    if (requests)
      quantities.push(
        counted(
          `rate:${owner}:${id}:requests`,
          "requests",
          minute,
          scaled(requests),
          `${requests} per minute`,
          "rate_limit",
          `${owner}_requests`,
          keyHash,
        ),
      );
    if (tokens)
      quantities.push(
        counted(
          `rate:${owner}:${id}:tokens`,
          "tokens",
          minute,
          scaled(tokens),
          `${tokens} per minute`,
          "rate_limit",
          `${owner}_tokens`,
          keyHash,
        ),
      );
  };
  perMinute("key", key.hash, key, key.hash);
  // The workspace's are shared by all its keys: their grants lock the workspace only.
  perMinute("workspace", key.workspaceId, context.workspace, null);
  if (free) {
    const day = { start: currentPeriodStart("daily", now), end: nextReset("daily", now)! };
    quantities.push(
      counted(
        `free:${key.hash}`,
        "requests",
        day,
        limits.freeModelDailyRequests,
        "free-model daily requests",
        "free_quota",
        null,
        key.hash,
      ),
    );
  }
  const spend = new Map<string, Quantity>();
  for (const layer of budgetLayers(key, context.guardrails, context.workspaceBudgets, context.workspace, now)) {
    const name = `${layer.scope}:${layer.scopeId}:${layer.period}`;
    let quantity = spend.get(name);
    if (!quantity) {
      quantity = {
        name,
        windowStart: layer.periodStart,
        windowEnd: nextReset(layer.period, now),
        kind: "spend",
        scope: layer.scope,
        scopeId: layer.scopeId,
        period: layer.period,
        limits: [],
        refusal: "budget",
        rateLimit: null,
        keyHash: layer.scope === "key" ? key.hash : null,
        workspaceId: key.workspaceId,
      };
      spend.set(name, quantity);
      quantities.push(quantity);
    }
    quantity.limits.push({ limit: layer.limitUsd, includeByok: layer.includeByok, label: layer.label });
  }
  return quantities;
}

/**
 * A request rate limit's quantity (the gateway's, the key's, the workspace's): what a response
 * cache hit still counts against.
 */
export function isRateLimit(quantity: Quantity): boolean {
  return quantity.kind === "requests" && quantity.rateLimit !== null;
}

/**
 * Any rate limit's quantity, of requests or tokens: what a batch item is admitted against (its
 * budget was reserved with its batch).
 */
export function isRateWindow(quantity: Quantity): boolean {
  return quantity.rateLimit !== null;
}

/** What a refusal by `quantity` is called in the metrics and the ledger; undefined for a budget's. */
export function limitNameOf(quantity: Quantity): LimitName | undefined {
  return quantity.rateLimit ?? (quantity.refusal === "free_quota" ? "free_model_requests" : undefined);
}

/** The fixed window of `lengthMs` that holds `now`, aligned to the epoch. */
function fixedWindow(now: Date, lengthMs: number): { start: Date; end: Date } {
  const start = Math.floor(now.getTime() / lengthMs) * lengthMs;
  return { start: new Date(start), end: new Date(start + lengthMs) };
}

import * as assert from "uvu/assert";
import type { ApplyingGuardrail } from "../../../server/engine/governance/applying-guardrails.js";
import {
  isRateLimit,
  isRateWindow,
  type Quantity,
  type QuantityLimits,
  type QuantitySource,
  quantitiesFor,
} from "../../../server/engine/admission/quantities.js";
import type { RateLimitColumns } from "../../../server/engine/admission/rate-limit-settings.js";
import { suite } from "../../support/suite.js";

/**
 * Which quantities a call draws on (server/engine/admission/quantities.ts), one row per rule, on
 * plain governance data: no database, no gateway. Each quantity is summarized as
 * `name kind window limits refusal [rate limit]`, the window in UTC, `…` for a lifetime counter.
 */
const test = suite("admission: the quantities of a call");

const NOW = new Date("2026-03-15T10:00:30.000Z"); // a Sunday
const HASH = "h1";
const NO_LIMITS: QuantityLimits = { rateLimitRequests: 0, rateLimitWindowSeconds: 60, freeModelDailyRequests: 50 };

function guardrail(
  id: string,
  limitMicros: string | null,
  resetInterval: ApplyingGuardrail["resetInterval"],
): ApplyingGuardrail {
  return {
    id,
    name: id,
    limitMicros,
    resetInterval,
    includeByokInBudgets: false,
    allowedModels: null,
    ignoredModels: null,
    allowedProviders: null,
    ignoredProviders: null,
    allowedDataRegions: null,
    enforceZdr: null,
    enforceZdrAnthropic: null,
    enforceZdrGoogle: null,
    enforceZdrOpenai: null,
    enforceZdrOther: null,
    enforceZdrXai: null,
    enableFreeModelTraining: true,
    enablePaidModelTraining: true,
    contentFilters: [],
    path: "key",
  };
}

/** `keyRate` and `workspaceRate`: their `svc_rate_limit`, requests and tokens per minute. */
function source(
  parts: {
    limitMicros?: string;
    limitReset?: string;
    guardrails?: ApplyingGuardrail[];
    budgets?: [string, string][];
    keyRate?: RateLimitColumns;
    workspaceRate?: RateLimitColumns;
  } = {},
): QuantitySource {
  return {
    caller: {
      key: {
        hash: HASH,
        workspaceId: "w1",
        limitMicros: parts.limitMicros ?? null,
        limitReset: parts.limitReset ?? null,
        includeByokInLimit: false,
        ...parts.keyRate,
      },
    },
    guardrails: parts.guardrails ?? [],
    workspaceBudgets: (parts.budgets ?? []).map(([interval, limitMicros], i) => ({
      id: `b${i}`,
      interval,
      limitMicros,
    })) as QuantitySource["workspaceBudgets"],
    workspace: { id: "w1", includeByokInBudgets: false, ...parts.workspaceRate },
  };
}

const perMinute = (requests: number | null, tokens: number | null): RateLimitColumns => ({
  rateLimitRequestsPerMinute: requests,
  rateLimitTokensPerMinute: tokens,
});

const summary = (q: Quantity) =>
  `${q.name} ${q.kind} ${q.windowStart.toISOString()}..${q.windowEnd?.toISOString() ?? "…"} ` +
  `${q.limits.map((l) => l.limit).join("+")} ${q.refusal}${q.rateLimit ? ` ${q.rateLimit}` : ""}`;

const ROWS: [rule: string, from: QuantitySource, limits: QuantityLimits, free: boolean, expected: string[]][] = [
  ["nothing limited: no quantity", source(), NO_LIMITS, false, []],
  [
    "the rate limit is a window of the key's requests, aligned to the window's length",
    source(),
    { ...NO_LIMITS, rateLimitRequests: 60 },
    false,
    ["rate:h1 requests 2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 60 rate_limit gateway_requests"],
  ],
  [
    "a key's svc_rate_limit: a minute of its requests and one of its tokens, beside the gateway's default",
    source({ keyRate: perMinute(30, 1200) }),
    { ...NO_LIMITS, rateLimitRequests: 600, rateLimitWindowSeconds: 3600 },
    false,
    [
      "rate:h1 requests 2026-03-15T10:00:00.000Z..2026-03-15T11:00:00.000Z 600 rate_limit gateway_requests",
      "rate:key:h1:requests requests 2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 30 rate_limit key_requests",
      "rate:key:h1:tokens tokens 2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 1200 rate_limit key_tokens",
    ],
  ],
  [
    "a shorter window (GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS) counts each per-minute limit scaled to it, " +
      "rounded down, at least 1",
    source({ keyRate: perMinute(600, 5) }),
    { ...NO_LIMITS, rateLimitMinuteWindowSeconds: 10 },
    false,
    [
      "rate:key:h1:requests requests 2026-03-15T10:00:30.000Z..2026-03-15T10:00:40.000Z 100 rate_limit key_requests",
      "rate:key:h1:tokens tokens 2026-03-15T10:00:30.000Z..2026-03-15T10:00:40.000Z 1 rate_limit key_tokens",
    ],
  ],
  [
    "a limit that is null adds nothing",
    source({ keyRate: perMinute(null, 500) }),
    NO_LIMITS,
    false,
    ["rate:key:h1:tokens tokens 2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 500 rate_limit key_tokens"],
  ],
  [
    "a workspace's svc_rate_limit is the workspace's own minute, shared by its keys",
    source({ workspaceRate: perMinute(5, 100) }),
    NO_LIMITS,
    false,
    [
      "rate:workspace:w1:requests requests " +
        "2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 5 rate_limit workspace_requests",
      "rate:workspace:w1:tokens tokens " +
        "2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 100 rate_limit workspace_tokens",
    ],
  ],
  [
    "a free call also draws on the key's free-model day",
    source(),
    NO_LIMITS,
    true,
    ["free:h1 requests 2026-03-15T00:00:00.000Z..2026-03-16T00:00:00.000Z 50 free_quota"],
  ],
  ["a paid call does not", source(), NO_LIMITS, false, []],
  [
    "a lifetime credit limit never resets",
    source({ limitMicros: "5000000" }),
    NO_LIMITS,
    false,
    ["key:h1:lifetime spend 1970-01-01T00:00:00.000Z..… 5 budget"],
  ],
  [
    "a daily key limit and a daily guardrail budget share one counter, with both limits",
    source({ limitMicros: "5000000", limitReset: "daily", guardrails: [guardrail("g1", "2500000", "daily")] }),
    NO_LIMITS,
    false,
    ["key:h1:daily spend 2026-03-15T00:00:00.000Z..2026-03-16T00:00:00.000Z 5+2.5 budget"],
  ],
  [
    "a weekly guardrail budget is its own counter, from Monday",
    source({ limitMicros: "5000000", limitReset: "monthly", guardrails: [guardrail("g1", "1000000", "weekly")] }),
    NO_LIMITS,
    false,
    [
      "key:h1:monthly spend 2026-03-01T00:00:00.000Z..2026-04-01T00:00:00.000Z 5 budget",
      "key:h1:weekly spend 2026-03-09T00:00:00.000Z..2026-03-16T00:00:00.000Z 1 budget",
    ],
  ],
  [
    "a guardrail without a budget adds nothing",
    source({ guardrails: [guardrail("g1", null, "daily")] }),
    NO_LIMITS,
    false,
    [],
  ],
  [
    "workspace budgets are the workspace's counters",
    source({
      budgets: [
        ["daily", "10000000"],
        ["lifetime", "90000000"],
      ],
    }),
    NO_LIMITS,
    false,
    [
      "workspace:w1:daily spend 2026-03-15T00:00:00.000Z..2026-03-16T00:00:00.000Z 10 budget",
      "workspace:w1:lifetime spend 1970-01-01T00:00:00.000Z..… 90 budget",
    ],
  ],
];

for (const [rule, from, limits, free, expected] of ROWS) {
  test(rule, () => {
    assert.equal(quantitiesFor(from, limits, free, NOW).map(summary), expected);
  });
}

test("a workspace's quantity locks the workspace only; a key's locks the key too", () => {
  const [keyQuantity, workspaceQuantity] = quantitiesFor(
    source({ limitMicros: "1000000", budgets: [["daily", "1000000"]] }),
    NO_LIMITS,
    false,
    NOW,
  );
  assert.equal([keyQuantity?.keyHash, keyQuantity?.workspaceId], [HASH, "w1"]);
  assert.equal([workspaceQuantity?.keyHash, workspaceQuantity?.workspaceId], [null, "w1"]);
});

test("a workspace's rate limits lock the workspace only; a key's lock the key too", () => {
  const quantities = quantitiesFor(
    source({ keyRate: perMinute(1, 1), workspaceRate: perMinute(1, 1) }),
    NO_LIMITS,
    false,
    NOW,
  );
  assert.equal(
    quantities.map((q) => [q.name, q.keyHash]),
    [
      ["rate:key:h1:requests", HASH],
      ["rate:key:h1:tokens", HASH],
      ["rate:workspace:w1:requests", null],
      ["rate:workspace:w1:tokens", null],
    ],
  );
});

test(
  "a response cache hit counts against the request limits only; " + "a batch item against every rate limit, no budget",
  () => {
    const quantities = quantitiesFor(
      source({ limitMicros: "1000000", keyRate: perMinute(10, 100), workspaceRate: perMinute(20, 200) }),
      { ...NO_LIMITS, rateLimitRequests: 60 },
      true,
      NOW,
    );
    assert.equal(
      quantities.filter(isRateLimit).map((q) => q.name),
      ["rate:h1", "rate:key:h1:requests", "rate:workspace:w1:requests"],
    );
    assert.equal(
      quantities.filter(isRateWindow).map((q) => q.name),
      [
        "rate:h1",
        "rate:key:h1:requests",
        "rate:key:h1:tokens",
        "rate:workspace:w1:requests",
        "rate:workspace:w1:tokens",
      ],
    );
  },
);

test.run();

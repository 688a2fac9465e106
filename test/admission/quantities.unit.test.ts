import * as assert from "uvu/assert";
import type { ApplyingGuardrail } from "../../server/engine/governance/applying-guardrails.js";
import { type Quantity, type QuantityLimits, type QuantitySource, quantitiesFor } from "../../server/engine/admission/quantities.js";
import { suite } from "../support/suite.js";

/**
 * Which quantities a call draws on (server/engine/admission/quantities.ts), one row per rule, on
 * plain governance data: no database, no gateway. Each quantity is summarized as
 * `name kind window limits refusal`, the window in UTC, `…` for a lifetime counter.
 */
const test = suite("admission: the quantities of a call");

const NOW = new Date("2026-03-15T10:00:30.000Z"); // a Sunday
const HASH = "h1";
const NO_LIMITS: QuantityLimits = { rateLimitRequests: 0, rateLimitWindowSeconds: 60, freeModelDailyRequests: 50 };

function guardrail(id: string, limitMicros: string | null, resetInterval: ApplyingGuardrail["resetInterval"]): ApplyingGuardrail {
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

function source(parts: { limitMicros?: string; limitReset?: string; guardrails?: ApplyingGuardrail[]; budgets?: [string, string][] } = {}): QuantitySource {
  return {
    caller: { key: { hash: HASH, workspaceId: "w1", limitMicros: parts.limitMicros ?? null, limitReset: parts.limitReset ?? null, includeByokInLimit: false } },
    guardrails: parts.guardrails ?? [],
    workspaceBudgets: (parts.budgets ?? []).map(([interval, limitMicros], i) => ({ id: `b${i}`, interval, limitMicros })) as QuantitySource["workspaceBudgets"],
    workspace: { id: "w1", includeByokInBudgets: false },
  };
}

const summary = (q: Quantity) => `${q.name} ${q.kind} ${q.windowStart.toISOString()}..${q.windowEnd?.toISOString() ?? "…"} ${q.limits.map((l) => l.limit).join("+")} ${q.refusal}`;

const ROWS: [rule: string, from: QuantitySource, limits: QuantityLimits, free: boolean, expected: string[]][] = [
  ["nothing limited: no quantity", source(), NO_LIMITS, false, []],
  [
    "the rate limit is a window of the key's requests, aligned to the window's length",
    source(),
    { ...NO_LIMITS, rateLimitRequests: 60 },
    false,
    ["rate:h1 requests 2026-03-15T10:00:00.000Z..2026-03-15T10:01:00.000Z 60 rate_limit"],
  ],
  ["a free call also draws on the key's free-model day", source(), NO_LIMITS, true, ["free:h1 requests 2026-03-15T00:00:00.000Z..2026-03-16T00:00:00.000Z 50 free_quota"]],
  ["a paid call does not", source(), NO_LIMITS, false, []],
  ["a lifetime credit limit never resets", source({ limitMicros: "5000000" }), NO_LIMITS, false, ["key:h1:lifetime spend 1970-01-01T00:00:00.000Z..… 5 budget"]],
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
    ["key:h1:monthly spend 2026-03-01T00:00:00.000Z..2026-04-01T00:00:00.000Z 5 budget", "key:h1:weekly spend 2026-03-09T00:00:00.000Z..2026-03-16T00:00:00.000Z 1 budget"],
  ],
  ["a guardrail without a budget adds nothing", source({ guardrails: [guardrail("g1", null, "daily")] }), NO_LIMITS, false, []],
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
    ["workspace:w1:daily spend 2026-03-15T00:00:00.000Z..2026-03-16T00:00:00.000Z 10 budget", "workspace:w1:lifetime spend 1970-01-01T00:00:00.000Z..… 90 budget"],
  ],
];

for (const [rule, from, limits, free, expected] of ROWS) {
  test(rule, () => {
    assert.equal(quantitiesFor(from, limits, free, NOW).map(summary), expected);
  });
}

test("a workspace's quantity locks the workspace only; a key's locks the key too", () => {
  const [keyQuantity, workspaceQuantity] = quantitiesFor(source({ limitMicros: "1000000", budgets: [["daily", "1000000"]] }), NO_LIMITS, false, NOW);
  assert.equal([keyQuantity?.keyHash, keyQuantity?.workspaceId], [HASH, "w1"]);
  assert.equal([workspaceQuantity?.keyHash, workspaceQuantity?.workspaceId], [null, "w1"]);
});

test.run();

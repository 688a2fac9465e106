import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import type { CatalogEndpoint, Pricing } from "../../../server/engine/catalog/catalog.js";
import {
  DEFAULT_COMPLETION_TOKENS,
  estimatePromptTokens,
  worstCaseCost,
} from "../../../server/engine/inference/cost-estimate.js";

/**
 * The worst-case cost admission reserves before a call, as a table computed by hand: which
 * completion tokens count (the request's cap, else the endpoint's, else the default, never more
 * than the context leaves), the most expensive endpoint that may be tried, and prompt tokens that
 * may all turn out cache writes when writes cost more than prompts.
 */
const test = suite("inference: worst-case cost");

function endpoint(
  pricing: Partial<Pricing>,
  contextLength = 10_000,
  maxCompletionTokens: number | null = null,
): CatalogEndpoint {
  return {
    id: "m/x@p",
    modelId: "m/x",
    providerSlug: "p",
    providerName: "P",
    tag: "",
    upstreamModelId: "x",
    contextLength,
    maxCompletionTokens,
    maxPromptTokens: null,
    quantization: null,
    pricing: { prompt: "0.000001", completion: "0.000002", image: "0", request: "0", ...pricing },
    supportedParameters: [],
    supportsImplicitCaching: false,
    region: "global",
    zdr: false,
    dataCollection: "deny",
  };
}

interface Row {
  name: string;
  endpoints: CatalogEndpoint[];
  promptTokens: number;
  requested?: number;
  /** USD, worked out by hand. */
  expect: string;
}

const ROWS: Row[] = [
  // 1000 × 0.000001 + 500 × 0.000002
  {
    name: "the request's completion cap",
    endpoints: [endpoint({})],
    promptTokens: 1000,
    requested: 500,
    expect: "0.002",
  },
  // 1000 × 0.000001 + 300 × 0.000002
  {
    name: "else the endpoint's max_completion_tokens",
    endpoints: [endpoint({}, 10_000, 300)],
    promptTokens: 1000,
    expect: "0.0016",
  },
  // 1000 × 0.000001 + 4096 × 0.000002
  { name: "else the default", endpoints: [endpoint({})], promptTokens: 1000, expect: "0.009192" },
  // context 1500 leaves 500: 1000 × 0.000001 + 500 × 0.000002
  {
    name: "never more than the context leaves",
    endpoints: [endpoint({}, 1500)],
    promptTokens: 1000,
    requested: 2000,
    expect: "0.002",
  },
  // a prompt over the context still reserves one completion token
  {
    name: "a prompt over the context: one completion token",
    endpoints: [endpoint({}, 500)],
    promptTokens: 1000,
    expect: "0.001002",
  },
  // 0.002 against 1000 × 0.000003 + 500 × 0.000004 = 0.005
  {
    name: "the most expensive endpoint sets it",
    endpoints: [endpoint({}), endpoint({ prompt: "0.000003", completion: "0.000004" })],
    promptTokens: 1000,
    requested: 500,
    expect: "0.005",
  },
  // writes at 0.00000125: 1000 × 0.00000125 + 500 × 0.000002
  {
    name: "cache writes priced above prompt: every prompt token a write",
    endpoints: [endpoint({ inputCacheWrite: "0.00000125" })],
    promptTokens: 1000,
    requested: 500,
    expect: "0.00225",
  },
  // reads below prompt never lower the estimate
  {
    name: "cheaper cache reads do not lower it",
    endpoints: [endpoint({ inputCacheRead: "0.0000001" })],
    promptTokens: 1000,
    requested: 500,
    expect: "0.002",
  },
  // 1000 × 0.000001 + 500 × 0.000002 + 0.01 per request
  {
    name: "a per-request price counts",
    endpoints: [endpoint({ request: "0.01" })],
    promptTokens: 1000,
    requested: 500,
    expect: "0.012",
  },
  {
    name: "free",
    endpoints: [endpoint({ prompt: "0", completion: "0" })],
    promptTokens: 1000,
    requested: 500,
    expect: "0",
  },
];

for (const row of ROWS) {
  test(row.name, () => {
    assert.is(worstCaseCost(row.endpoints, row.promptTokens, row.requested), row.expect);
  });
}

test("the default completion tokens are the documented 4096", () => {
  assert.is(DEFAULT_COMPLETION_TOKENS, 4096);
});

test("prompt tokens: a quarter of the text's characters, plus 4 per part", () => {
  const TABLE: Array<[Parameters<typeof estimatePromptTokens>[0], number]> = [
    [[], 0],
    [["abcd"], 1 + 4],
    [["abcde"], 2 + 4],
    // Every string and number of a message counts, keys do not.
    [[{ role: "user", content: "12345678" }], Math.ceil((4 + 8) / 4) + 4],
    [
      [
        { role: "user", content: [{ type: "text", text: "abcdefgh" }] },
        { role: "assistant", content: null },
      ],
      Math.ceil((4 + 4 + 8 + 9 + 4) / 4) + 8,
    ],
  ];
  for (const [parts, tokens] of TABLE) assert.is(estimatePromptTokens(parts), tokens, JSON.stringify(parts));
});

test.run();

import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import type { CatalogEndpoint } from "../../../server/engine/catalog/catalog.js";
import { costUsd, maxUsd } from "../../../server/engine/money/money.js";
import { worstCaseCost } from "../../../server/engine/inference/cost-estimate.js";

/** The worst-case estimate admission reserves is never below what the call can cost with prompt caching. */
const test = suite("cost estimate: prompt cache prices");

function endpoint(pricing: Partial<CatalogEndpoint["pricing"]>): CatalogEndpoint {
  return {
    id: "m/x@p",
    modelId: "m/x",
    providerSlug: "p",
    providerName: "P",
    tag: "p",
    upstreamModelId: "x",
    contextLength: 100_000,
    maxCompletionTokens: null,
    maxPromptTokens: null,
    quantization: null,
    pricing: { prompt: "0.000003", completion: "0.000015", image: "0", request: "0", ...pricing },
    supportedParameters: [],
    supportsImplicitCaching: true,
    region: "global",
    zdr: false,
    dataCollection: "deny",
  };
}

test("a cache write price above `prompt`: every prompt token counted as a write", () => {
  const cached = endpoint({ inputCacheRead: "0.0000003", inputCacheWrite: "0.00000375" });
  // 1000 × 0.00000375 + 100 × 0.000015
  assert.is(worstCaseCost([cached], 1000, 100), "0.00525");
  // Every split of the 1000 prompt tokens costs at most the estimate.
  const splits = [
    [0, 0],
    [1000, 0],
    [0, 1000],
    [600, 200],
  ].map(([read, write]) =>
    costUsd(cached.pricing, { promptTokens: 1000, completionTokens: 100, cachedTokens: read, cacheWriteTokens: write }),
  );
  assert.is(maxUsd(splits), "0.00525");
});

test("without cache prices, or cheaper ones, the estimate is as before", () => {
  assert.is(worstCaseCost([endpoint({})], 1000, 100), "0.0045");
  assert.is(
    worstCaseCost([endpoint({ inputCacheRead: "0.0000003", inputCacheWrite: "0.000001" })], 1000, 100),
    "0.0045",
  );
});

test.run();

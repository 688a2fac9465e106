import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { costUsd, promptCostUsd } from "../../../server/engine/money/money.js";

/** Prompt cache prices in the exact cost of a call (server/engine/money/money.ts). */
const test = suite("money: prompt cache prices");

const CACHED = {
  prompt: "0.000003",
  completion: "0.000015",
  inputCacheRead: "0.0000003",
  inputCacheWrite: "0.00000375",
};

test("cache reads and writes at their prices, the rest of the prompt at `prompt`", () => {
  const usage = { promptTokens: 1000, completionTokens: 100, cachedTokens: 600, cacheWriteTokens: 200 };
  // 200 × 0.000003 + 600 × 0.0000003 + 200 × 0.00000375 = 0.0006 + 0.00018 + 0.00075
  assert.is(promptCostUsd(CACHED, usage), "0.00153");
  assert.is(costUsd(CACHED, usage), "0.00303");
});

test("without a cache price, cached and written tokens cost `prompt`", () => {
  const usage = { promptTokens: 1000, completionTokens: 100, cachedTokens: 600, cacheWriteTokens: 200 };
  assert.is(costUsd({ prompt: "0.000003", completion: "0.000015" }, usage), "0.0045");
  // Only a read price: 200 × 0.000003 + 600 × 0.0000003 + 200 × 0.000003 + 0.0015.
  assert.is(costUsd({ prompt: "0.000003", completion: "0.000015", inputCacheRead: "0.0000003" }, usage), "0.00288");
});

test("cache counts beyond the prompt are cut to it: never billed for tokens the prompt did not have", () => {
  // 100 prompt tokens, reported as 80 read and 50 written: 80 reads, 20 writes, none uncached.
  const usage = { promptTokens: 100, completionTokens: 0, cachedTokens: 80, cacheWriteTokens: 50 };
  assert.is(costUsd(CACHED, usage), "0.000099");
});

test.run();

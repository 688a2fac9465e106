import * as assert from "uvu/assert";
import { openAiDuration, rateLimitHeaders } from "../../wire/rate-limit-headers.js";
import { suite } from "../support/suite.js";

/**
 * OpenAI's rate-limit headers as wire/rate-limit-headers.ts writes them: the reset in Go's
 * duration text (what OpenAI sends and its clients parse), and the tightest limit of each kind.
 */
const test = suite("rate-limit headers");

test("a reset is written as OpenAI writes it: Go's duration text to the millisecond", () => {
  const cases: [number, string][] = [
    [0, "0s"],
    [20, "20ms"],
    [999, "999ms"],
    [1000, "1s"],
    [1500, "1.5s"],
    [59_998, "59.998s"],
    [60_000, "1m0s"],
    [360_000, "6m0s"],
    [61_250, "1m1.25s"],
    [3_723_500, "1h2m3.5s"],
    [-5, "0s"],
  ];
  for (const [ms, text] of cases) assert.is(openAiDuration(ms), text, `${ms} ms`);
});

test("the tightest limit of each kind: the least left, and of equals the smaller limit", () => {
  const headers = rateLimitHeaders([
    { kind: "requests", limit: 600, remaining: 590, resetMs: 30_000 },
    { kind: "requests", limit: 5, remaining: 4, resetMs: 1_500 },
    { kind: "tokens", limit: 1000, remaining: 50, resetMs: 20 },
    { kind: "tokens", limit: 120, remaining: 100, resetMs: 45_000 },
    { kind: "tokens", limit: 200, remaining: 50, resetMs: 45_000 },
  ]);
  assert.equal(headers, {
    "x-ratelimit-limit-requests": "5",
    "x-ratelimit-remaining-requests": "4",
    "x-ratelimit-reset-requests": "1.5s",
    "x-ratelimit-limit-tokens": "200",
    "x-ratelimit-remaining-tokens": "50",
    "x-ratelimit-reset-tokens": "45s",
  });
});

test("a kind no limit applies to has no headers; remaining is never negative", () => {
  assert.equal(rateLimitHeaders([{ kind: "requests", limit: 10, remaining: -3, resetMs: 1000 }]), {
    "x-ratelimit-limit-requests": "10",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": "1s",
  });
  assert.equal(rateLimitHeaders([]), {});
});

test.run();

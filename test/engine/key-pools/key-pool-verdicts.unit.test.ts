import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import type { KeyState } from "../../../server/engine/key-pools/key-pool.js";
import { KeyPools, type KeyChoice } from "../../../server/engine/key-pools/key-pools.js";
import { verdictOf } from "../../../server/engine/key-pools/key-verdicts.js";
import { UpstreamError } from "../../../server/engine/providers/provider.js";
import { createLogger } from "../../../server/platform/logger.js";
import { CAP_MS, choice, keys, provider, states, status, T0 } from "./key-pool-fixture.js";

/** What each failure says about its key, and whether its call may go to another one. */
const test = suite("key pools: verdicts");

/** One failure of a call on a key of a fresh three-key pool, `at` ms after T0. */
interface Failure {
  call: string;
  key: 0 | 1 | 2;
  status: number;
  at?: number;
  retryAfterS?: number;
}

const VERDICT_TABLE: Array<{ name: string; failures: Failure[]; anotherKey: boolean[]; states: KeyState[] }> = [
  {
    name: "a 403 is the request's fault: the call answers it, the key stays healthy",
    failures: [{ call: "c1", key: 0, status: 403 }],
    anotherKey: [false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "two distinct calls with a 403 on one key leave it healthy",
    failures: [
      { call: "c1", key: 0, status: 403 },
      { call: "c2", key: 0, status: 403, at: 10_000 },
    ],
    anotherKey: [false, false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "the third distinct call with a 403 on one key within 60 s refuses it, and may go to another key",
    failures: [
      { call: "c1", key: 0, status: 403 },
      { call: "c2", key: 0, status: 403, at: 10_000 },
      { call: "c3", key: 0, status: 403, at: 59_999 },
    ],
    anotherKey: [false, false, true],
    states: ["refused", "healthy", "healthy"],
  },
  {
    name: "403s further apart than the window never add up",
    failures: [
      { call: "c1", key: 0, status: 403 },
      { call: "c2", key: 0, status: 403, at: 50_000 },
      { call: "c3", key: 0, status: 403, at: 100_000 },
      { call: "c4", key: 0, status: 403, at: 150_000 },
    ],
    anotherKey: [false, false, false, false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "one call meeting a 403 twice (two endpoints of the provider) counts once",
    failures: [
      { call: "c1", key: 0, status: 403 },
      { call: "c1", key: 0, status: 403 },
      { call: "c2", key: 0, status: 403 },
    ],
    anotherKey: [false, false, false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "403s on different keys add up on none",
    failures: [
      { call: "c1", key: 0, status: 403 },
      { call: "c2", key: 1, status: 403 },
      { call: "c3", key: 2, status: 403 },
    ],
    anotherKey: [false, false, false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "a 401 refuses its key and moves the call once; the call's second 401 marks nothing",
    failures: [
      { call: "c1", key: 0, status: 401 },
      { call: "c1", key: 1, status: 401 },
    ],
    anotherKey: [true, false],
    states: ["refused", "healthy", "healthy"],
  },
  {
    name: "a 429 rests its key and moves the call once; the call's second 429 rests nothing",
    failures: [
      { call: "c1", key: 0, status: 429, retryAfterS: 30 },
      { call: "c1", key: 1, status: 429, retryAfterS: 30 },
    ],
    anotherKey: [true, false],
    states: ["cooling", "healthy", "healthy"],
  },
  {
    name: "after a 403 a call's 401 on another key marks nothing",
    failures: [
      { call: "c1", key: 0, status: 403 },
      { call: "c1", key: 1, status: 401 },
    ],
    anotherKey: [false, false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "a server failure gets one retry on another key and leaves keys usable",
    failures: [
      { call: "c1", key: 0, status: 500 },
      { call: "c1", key: 1, status: 502 },
    ],
    anotherKey: [true, false],
    states: ["healthy", "healthy", "healthy"],
  },
  {
    name: "a 429 after a server failure still rests its key",
    failures: [
      { call: "c1", key: 0, status: 503 },
      { call: "c1", key: 1, status: 429, retryAfterS: 30 },
    ],
    anotherKey: [true, true],
    states: ["healthy", "cooling", "healthy"],
  },
  {
    name: "the request's other faults say nothing about the key",
    failures: [
      { call: "c1", key: 0, status: 400 },
      { call: "c2", key: 0, status: 404 },
      { call: "c3", key: 0, status: 409 },
      { call: "c4", key: 0, status: 422 },
    ],
    anotherKey: [false, false, false, false],
    states: ["healthy", "healthy", "healthy"],
  },
];

for (const row of VERDICT_TABLE) {
  test(`verdicts: ${row.name}`, () => {
    const pools = new KeyPools([provider], createLogger("silent"), undefined, {
      cooldownMaxMs: CAP_MS,
      now: () => now,
    });
    const pool = pools.pool("openai")!;
    const calls = new Map<string, KeyChoice>();
    let now = T0;
    const anotherKey = row.failures.map((failure) => {
      now = T0 + (failure.at ?? 0);
      const call = calls.get(failure.call) ?? choice();
      calls.set(failure.call, call);
      return pools.afterFailure(pool, pool.keys[failure.key]!, status(failure.status, failure.retryAfterS), call);
    });
    assert.equal(anotherKey, row.anotherKey, "whether the call goes to another key");
    assert.equal(states(pool, now), row.states);
  });
}

test("what a failure says about its key: the provider's answer, not the request's fault", () => {
  assert.is(verdictOf(status(429)), "cooldown");
  assert.is(verdictOf(status(402)), "cooldown");
  assert.is(verdictOf(status(401)), "refused");
  assert.is(verdictOf(status(403)), "forbidden");
  assert.is(verdictOf(status(500)), "unhealthy");
  assert.is(verdictOf(status(503)), "unhealthy");
  assert.is(verdictOf(status(408)), "unhealthy");
  assert.is(verdictOf(new UpstreamError("timeout", "slow")), "unhealthy");
  assert.is(verdictOf(new UpstreamError("connect", "refused")), "unhealthy");
  assert.is(verdictOf(status(400)), "none");
  assert.is(verdictOf(status(404)), "none");
  assert.is(verdictOf(new UpstreamError("cut", "cut")), "none");
  assert.is(verdictOf(new UpstreamError("aborted", "gone")), "none");
});

test("a provider with one key has no pool", () => {
  const pools = new KeyPools([{ ...provider, keys: keys([1]) }], createLogger("silent"), undefined, {
    cooldownMaxMs: CAP_MS,
  });
  assert.is(pools.pool("openai"), undefined);
  assert.is(pools.pool("unknown"), undefined);
});
test.run();

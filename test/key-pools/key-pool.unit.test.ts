import * as assert from "uvu/assert";
import { suite } from "../support/suite.js";
import { KeyPool } from "../../server/engine/key-pools/key-pool.js";
import { KeyPools, affinityOf, type KeyChoice } from "../../server/engine/key-pools/key-pools.js";
import { affinityHash } from "../../server/engine/key-pools/key-choice.js";
import { poolKey, type PoolKey } from "../../server/engine/key-pools/pool-key.js";
import { verdictOf } from "../../server/engine/key-pools/key-verdicts.js";
import { promptPrefix } from "../../server/engine/key-pools/prompt-prefix.js";
import { UpstreamError } from "../../server/engine/providers/provider.js";
import { createLogger } from "../../server/platform/logger.js";
import type { CatalogProvider } from "../../server/engine/catalog/catalog.js";

/** The key pool's choice and health, with the clock given: no gateway, no database. */
const test = suite("key pools: choice and health");

const T0 = 1_800_000_000_000;
const keys = (weights: number[]): PoolKey[] => weights.map((weight, i) => poolKey(`secret-${i}`, weight, i));
const status = (code: number, retryAfterS?: number) => new UpstreamError("status", `upstream ${code}`, retryAfterS === undefined ? { status: code } : { status: code, retryAfterS });
const wins = (pool: KeyPool, calls: number, now = T0): Map<string, number> => {
  const counts = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    const key = pool.choose(affinityHash(`prompt number ${i}`), [], now);
    counts.set(key.label, (counts.get(key.label) ?? 0) + 1);
  }
  return counts;
};

test("over many prompts each key serves in proportion to its weight", () => {
  const counts = wins(new KeyPool("openai", keys([3, 1])), 4000);
  const a = counts.get("key-1") ?? 0;
  // 3:1 of 4,000 is 3,000; a fair hash lands within a few percent (deterministic: the prompts are fixed).
  assert.ok(a > 2850 && a < 3150, `key-1 served ${a} of 4000`);
  assert.is(a + (counts.get("key-2") ?? 0), 4000);
});

test("one affinity sticks to one key while it is usable, and only its calls move when it rests", () => {
  const pool = new KeyPool("openai", keys([1, 1, 1]));
  const before = Array.from({ length: 300 }, (_, i) => pool.choose(affinityHash(`s${i}`), [], T0));
  const again = Array.from({ length: 300 }, (_, i) => pool.choose(affinityHash(`s${i}`), [], T0));
  assert.equal(again, before);
  const resting = before[0]!;
  pool.failed(resting, "cooldown", 30, T0);
  const after = Array.from({ length: 300 }, (_, i) => pool.choose(affinityHash(`s${i}`), [], T0 + 1000));
  for (let i = 0; i < 300; i++) {
    if (before[i] === resting) assert.is.not(after[i], resting);
    else assert.is(after[i], before[i], "a call whose key is usable keeps it");
  }
});

test("a session keeps its key whatever the prompt; without one, the prompt's beginning decides", () => {
  const pool = new KeyPool("openai", keys([1, 1, 1, 1]));
  const chosen = new Set([0, 1, 2, 3, 4, 5].map((i) => pool.choose(affinityOf("session-7", { messages: [{ role: "user", content: `turn ${i}` }] }), [], T0)));
  assert.is(chosen.size, 1);
  const long = "You are a careful assistant. ".repeat(60);
  const sameStart = new Set(
    [0, 1, 2, 3].map((i) =>
      pool.choose(
        affinityOf(undefined, {
          messages: [
            { role: "system", content: long },
            { role: "user", content: `question ${i}` },
          ],
        }),
        [],
        T0,
      ),
    ),
  );
  assert.is(sameStart.size, 1, "prompts that share their first KiB share a key");
  assert.is(
    promptPrefix({
      messages: [
        { role: "user", content: [{ type: "text", text: "ab" }] },
        { role: "assistant", content: "cd" },
      ],
    }),
    "abcd",
  );
  assert.is(promptPrefix({ input: ["x", "y"] }), "xy");
});

test("a rate-limited key rests for its Retry-After, then serves again; a cooldown is extended, never shortened", () => {
  const pool = new KeyPool("openai", keys([1, 1]));
  const [a] = pool.keys;
  pool.failed(a!, "cooldown", 20, T0);
  assert.is(pool.health(T0)[0]?.state, "cooling");
  assert.is(pool.health(T0)[0]?.coolingUntil, T0 + 20_000);
  pool.failed(a!, "cooldown", 5, T0 + 1000);
  assert.is(pool.health(T0 + 1000)[0]?.coolingUntil, T0 + 20_000, "a shorter Retry-After does not shorten it");
  assert.ok(pool.apply({ provider: "openai", fingerprint: a!.fingerprint, until: T0 + 40_000 }), "another instance's longer cooldown applies");
  assert.not.ok(pool.apply({ provider: "openai", fingerprint: a!.fingerprint, until: T0 + 10_000 }));
  for (let i = 0; i < 50; i++) assert.is.not(pool.choose(affinityHash(`p${i}`), [], T0 + 39_000), a);
  assert.ok(wins(pool, 200, T0 + 40_000).get("key-1")! > 0, "usable again once the cooldown is over");
});

test("without Retry-After a cooldown starts at a second and doubles per strike; a success starts it over", () => {
  const pool = new KeyPool("openai", keys([1, 1]));
  const [a] = pool.keys;
  const until = (now: number) => pool.failed(a!, "cooldown", undefined, now)?.until;
  assert.is(until(T0), T0 + 1000);
  assert.is(until(T0 + 1000), T0 + 1000 + 2000);
  assert.is(until(T0 + 3000), T0 + 3000 + 4000);
  pool.succeeded(a!);
  assert.is(until(T0 + 7000), T0 + 7000 + 1000);
});

test("a refused key is never chosen again; with every key out the call gets a 429 naming the wait, or 401", () => {
  const pool = new KeyPool("openai", keys([1, 1]));
  const [a, b] = pool.keys;
  assert.ok(pool.failed(a!, "refused", undefined, T0)?.refused);
  assert.is(pool.failed(a!, "refused", undefined, T0), undefined, "said once");
  assert.is(wins(pool, 200).get("key-1"), undefined);
  pool.failed(b!, "cooldown", 12, T0);
  try {
    pool.choose(1, [], T0 + 2000);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, UpstreamError);
    assert.equal((err as UpstreamError).options, { status: 429, retryAfterS: 10 });
  }
  pool.failed(b!, "refused", undefined, T0);
  try {
    pool.choose(1, [], T0);
    assert.unreachable();
  } catch (err) {
    assert.is((err as UpstreamError).options.status, 401);
  }
});

test("what a failure says about its key: the provider's answer, not the request's fault", () => {
  assert.is(verdictOf(status(429)), "cooldown");
  assert.is(verdictOf(status(402)), "cooldown");
  assert.is(verdictOf(status(401)), "refused");
  assert.is(verdictOf(status(403)), "refused");
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

test("after a failure: another key at once after 429 or a refusal, only one retry after server failures, none for the request's fault", () => {
  const provider: CatalogProvider = { slug: "openai", name: "OpenAI", kind: "openai", baseUrl: "http://x", keys: keys([1, 1, 1]), timeoutMs: 1000, nativeBatches: false };
  const pools = new KeyPools([provider], createLogger("silent"), undefined);
  const pool = pools.pool("openai")!;
  const choice = (): KeyChoice => ({ affinity: () => 7, triedKeys: [] });
  const [a, b, c] = pool.keys;

  const limited = choice();
  assert.ok(pools.afterFailure(pool, a!, status(429, 30), limited));
  assert.ok(pools.afterFailure(pool, b!, status(429, 30), limited));
  assert.not.ok(pools.afterFailure(pool, c!, status(429, 30), limited), "no key left");

  const fresh = new KeyPools([provider], createLogger("silent"), undefined);
  const freshPool = fresh.pool("openai")!;
  const failing = choice();
  assert.ok(fresh.afterFailure(freshPool, a!, status(500), failing));
  assert.not.ok(fresh.afterFailure(freshPool, b!, status(502), failing), "one retry on another key, then the next endpoint");
  assert.not.ok(fresh.afterFailure(freshPool, a!, status(400), choice()));
  assert.is(freshPool.health(Date.now()).filter((k) => k.state === "healthy").length, 3, "server failures leave keys usable");
  assert.is(fresh.pool("unknown"), undefined);
  assert.is(new KeyPools([{ ...provider, keys: keys([1]) }], createLogger("silent"), undefined).pool("openai"), undefined, "one key: no pool");
});

test.run();

import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { KeyPools } from "../../../server/engine/key-pools/key-pools.js";
import { affinityHash } from "../../../server/engine/key-pools/key-choice.js";
import { UpstreamError } from "../../../server/engine/providers/provider.js";
import { createLogger } from "../../../server/platform/logger.js";
import { CAP_MS, choice, MINUTE, newPool, provider, states, status, T0, wins } from "./key-pool-fixture.js";

/** A key's rest after a 429, its cap, a refused key's probe and its back-off, with the clock given. */
const test = suite("key pools: cooldowns and probes");

test("a rate-limited key rests for its Retry-After, then serves again; a cooldown is extended, never shortened", () => {
  const pool = newPool([1, 1]);
  const [a] = pool.keys;
  pool.failed(a!, "cooldown", 20, T0);
  assert.is(pool.health(T0)[0]?.state, "cooling");
  assert.is(pool.health(T0)[0]?.coolingUntil, T0 + 20_000);
  pool.failed(a!, "cooldown", 5, T0 + 1000);
  assert.is(pool.health(T0 + 1000)[0]?.coolingUntil, T0 + 20_000, "a shorter Retry-After does not shorten it");
  assert.ok(
    pool.apply({ provider: "openai", fingerprint: a!.fingerprint, until: T0 + 40_000 }, T0),
    "another instance's longer cooldown applies",
  );
  assert.not.ok(pool.apply({ provider: "openai", fingerprint: a!.fingerprint, until: T0 + 10_000 }, T0));
  for (let i = 0; i < 50; i++) assert.is.not(pool.choose(affinityHash(`p${i}`), [], T0 + 39_000), a);
  assert.ok(wins(pool, 200, T0 + 40_000).get("key-1")! > 0, "usable again once the cooldown is over");
});

test("without Retry-After a cooldown starts at a second and doubles per strike; a success starts it over", () => {
  const pool = newPool([1, 1]);
  const [a] = pool.keys;
  const until = (now: number) => pool.failed(a!, "cooldown", undefined, now).change?.until;
  assert.is(until(T0), T0 + 1000);
  assert.is(until(T0 + 1000), T0 + 1000 + 2000);
  assert.is(until(T0 + 3000), T0 + 3000 + 4000);
  pool.succeeded(a!);
  assert.is(until(T0 + 7000), T0 + 7000 + 1000);
});

test("no cooldown outlasts the cap: not a huge Retry-After, not the doubling, not another instance's word", () => {
  const pool = newPool([1, 1]);
  const [a, b] = pool.keys;
  assert.is(pool.failed(a!, "cooldown", 99_999_999, T0).change?.until, T0 + CAP_MS);
  assert.is(pool.health(T0)[0]?.coolingUntil, T0 + CAP_MS);
  assert.not.ok(
    pool.apply({ provider: "openai", fingerprint: a!.fingerprint, until: T0 + 10 * 365 * 24 * 3600_000 }, T0),
    "capped to what it already has",
  );
  assert.ok(pool.apply({ provider: "openai", fingerprint: b!.fingerprint, until: Number.MAX_SAFE_INTEGER }, T0 + 1000));
  assert.is(pool.health(T0 + 1000)[1]?.coolingUntil, T0 + 1000 + CAP_MS);
  assert.is(wins(pool, 50, T0 + CAP_MS + 1000).size, 2, "both serve once the cap has passed");

  const short = newPool([1, 1], 3000);
  const [c] = short.keys;
  const until = (now: number) => short.failed(c!, "cooldown", undefined, now).change?.until;
  assert.equal(
    [until(T0), until(T0 + 1000), until(T0 + 3000), until(T0 + 6000)],
    [T0 + 1000, T0 + 3000, T0 + 6000, T0 + 9000],
    "1 s, 2 s, then the 3 s cap",
  );
});

test("a refused key is out until its probe; with every key out the call gets a 429 naming the wait, or 401", () => {
  const pool = newPool([1, 1]);
  const [a, b] = pool.keys;
  assert.equal(pool.failed(a!, "refused", undefined, T0).change, {
    provider: "openai",
    fingerprint: a!.fingerprint,
    refused: true,
    probeAt: T0 + 2 * MINUTE,
  });
  assert.is(wins(pool, 200).get("key-1"), undefined);
  assert.is(wins(pool, 200, T0 + 2 * MINUTE - 1).get("key-1"), undefined, "not before its probe");
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

test(
  "a refused key's probe: " +
    "one call at a time, healthy again when it succeeds, a doubling back-off up to an hour when it fails",
  () => {
    const pool = newPool([1, 1]);
    const [a] = pool.keys;
    const onA = Array.from({ length: 100 }, (_, i) => affinityHash(`probe ${i}`)).filter(
      (affinity) => pool.choose(affinity, [], T0) === a,
    );
    pool.failed(a!, "refused", undefined, T0);
    let now = T0 + 2 * MINUTE;
    assert.is(pool.choose(onA[0]!, [], now), a, "the first call after the back-off probes it");
    assert.ok(
      onA.slice(1).every((affinity) => pool.choose(affinity, [], now) !== a),
      "the others still avoid it while the probe is out",
    );
    // The probe fails: 4 min, then 8, 16, 32, 60 (capped).
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      if (i > 0) assert.is(pool.choose(onA[0]!, [], now), a);
      const change = pool.failed(a!, "refused", undefined, now).change;
      waits.push((change!.probeAt! - now) / MINUTE);
      now = change!.probeAt!;
    }
    assert.equal(waits, [4, 8, 16, 32, 60, 60]);
    assert.is(pool.choose(onA[0]!, [], now), a);
    assert.equal(pool.succeeded(a!), { provider: "openai", fingerprint: a!.fingerprint, recovered: true });
    assert.equal(states(pool, now), ["healthy", "healthy"]);
    assert.ok(
      onA.every((affinity) => pool.choose(affinity, [], now) === a),
      "its calls come back",
    );
    assert.is(
      pool.failed(a!, "refused", undefined, now).change?.probeAt,
      now + 2 * MINUTE,
      "a new refusal starts the back-off over",
    );
  },
);

test("a probe that says nothing about the key, or never reports, lets another call probe", () => {
  const pool = newPool([1, 1]);
  const [a] = pool.keys;
  const onA = Array.from({ length: 100 }, (_, i) => affinityHash(`lease ${i}`)).filter(
    (affinity) => pool.choose(affinity, [], T0) === a,
  );
  pool.failed(a!, "refused", undefined, T0);
  const due = T0 + 2 * MINUTE;
  assert.is(pool.choose(onA[0]!, [], due), a);
  assert.is(pool.failed(a!, "none", undefined, due).judged, false, "a 400 is the request's");
  assert.is(pool.choose(onA[1]!, [], due), a, "the next call probes");
  assert.is.not(pool.choose(onA[2]!, [], due + 59_999), a, "a probe that never reports holds the key a minute");
  assert.is(pool.choose(onA[2]!, [], due + MINUTE), a);
  assert.equal(states(pool, due + MINUTE), ["refused", "healthy"]);
  assert.is(pool.succeeded(pool.keys[1]!), undefined, "another key's success changes nothing");
});

test("a probe answered 429 moves its call to a usable key, and leaves the key refused with its probe free", () => {
  let now = T0;
  const pools = new KeyPools([provider], createLogger("silent"), undefined, { cooldownMaxMs: CAP_MS, now: () => now });
  const pool = pools.pool("openai")!;
  const [a] = pool.keys;
  const onA = Array.from({ length: 100 }, (_, i) => affinityHash(`busy ${i}`)).filter(
    (affinity) => pool.choose(affinity, [], T0) === a,
  );
  pools.afterFailure(pool, a!, status(401), choice());
  now = T0 + 2 * MINUTE;
  const probe = choice();
  assert.is(pool.choose(onA[0]!, [], now), a);
  assert.ok(pools.afterFailure(pool, a!, status(429, 30), probe), "to another key");
  assert.is(probe.judgedKey, undefined, "it judged no key");
  assert.equal(states(pool, now), ["refused", "healthy", "healthy"]);
  assert.is(pool.choose(onA[1]!, [], now), a, "the next call probes");
});
test.run();

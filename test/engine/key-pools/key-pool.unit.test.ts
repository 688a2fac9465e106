import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { KeyPool, type KeyState } from "../../../server/engine/key-pools/key-pool.js";
import { KeyPools, affinityOf, type KeyChoice } from "../../../server/engine/key-pools/key-pools.js";
import { affinityHash } from "../../../server/engine/key-pools/key-choice.js";
import { poolKey, type PoolKey } from "../../../server/engine/key-pools/pool-key.js";
import { verdictOf } from "../../../server/engine/key-pools/key-verdicts.js";
import { decodeChange, encodeChange, KEY_POOLS_CHANNEL } from "../../../server/engine/key-pools/pool-sharing.js";
import { promptPrefix } from "../../../server/engine/key-pools/prompt-prefix.js";
import { UpstreamError } from "../../../server/engine/providers/provider.js";
import { createLogger } from "../../../server/platform/logger.js";
import type { NotificationFeed } from "../../../server/platform/db/notification-feed.js";
import type { CatalogProvider } from "../../../server/engine/catalog/catalog.js";

/** The key pool's choice, verdicts and health, with the clock given: no gateway, no database. */
const test = suite("key pools: choice and health");

const T0 = 1_800_000_000_000;
/** GATEWAY_KEY_COOLDOWN_MAX_SECONDS's default, in ms. */
const CAP_MS = 900_000;
const MINUTE = 60_000;
const keys = (weights: number[]): PoolKey[] => weights.map((weight, i) => poolKey(`secret-${i}`, weight, i));
const newPool = (weights: number[], capMs = CAP_MS) => new KeyPool("openai", keys(weights), capMs);
const status = (code: number, retryAfterS?: number) =>
  new UpstreamError(
    "status",
    `upstream ${code}`,
    retryAfterS === undefined ? { status: code } : { status: code, retryAfterS },
  );
const states = (pool: KeyPool, now: number): KeyState[] => pool.health(now).map((key) => key.state);
const wins = (pool: KeyPool, calls: number, now = T0): Map<string, number> => {
  const counts = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    const key = pool.choose(affinityHash(`prompt number ${i}`), [], now);
    counts.set(key.label, (counts.get(key.label) ?? 0) + 1);
  }
  return counts;
};
const provider: CatalogProvider = {
  slug: "openai",
  name: "OpenAI",
  kind: "openai",
  baseUrl: "http://x",
  keys: keys([1, 1, 1]),
  timeoutMs: 1000,
  nativeBatches: false,
};
const choice = (): KeyChoice => ({ affinity: () => 7, triedKeys: [], judgedKey: undefined });

/** A notification feed in memory: what was said, and a way to say something as another instance. */
function memoryFeed(): NotificationFeed & { said: string[]; hear(payload: string): void } {
  const handlers: Array<(payload: string) => void> = [];
  return {
    said: [],
    hear: (payload) => {
      for (const handler of handlers) handler(payload);
    },
    subscribe(channel, handler) {
      assert.is(channel, KEY_POOLS_CHANNEL);
      handlers.push(handler);
    },
    notify(_channel, payload) {
      this.said.push(payload);
    },
    onConnected: () => undefined,
    live: () => true,
    stop: async () => undefined,
  };
}

test("over many prompts each key serves in proportion to its weight", () => {
  const counts = wins(newPool([3, 1]), 4000);
  const a = counts.get("key-1") ?? 0;
  // 3:1 of 4,000 is 3,000; a fair hash lands within a few percent (deterministic: the prompts are fixed).
  assert.ok(a > 2850 && a < 3150, `key-1 served ${a} of 4000`);
  assert.is(a + (counts.get("key-2") ?? 0), 4000);
});

test("one affinity sticks to one key while it is usable, and only its calls move when it rests", () => {
  const pool = newPool([1, 1, 1]);
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
  const pool = newPool([1, 1, 1, 1]);
  const chosen = new Set(
    [0, 1, 2, 3, 4, 5].map((i) =>
      pool.choose(affinityOf("session-7", { messages: [{ role: "user", content: `turn ${i}` }] }), [], T0),
    ),
  );
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

test("a refused key's probe: one call at a time, healthy again when it succeeds, a doubling back-off up to an hour when it fails", () => {
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
});

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

test("shared: a refusal carries its probe time, a recovery is told too, and another instance's word is capped", () => {
  let now = T0;
  const here = memoryFeed();
  const pools = new KeyPools([provider], createLogger("silent"), here, { cooldownMaxMs: CAP_MS, now: () => now });
  const pool = pools.pool("openai")!;
  const [a, b, c] = pool.keys;
  pools.afterFailure(pool, a!, status(401), choice());
  assert.equal(JSON.parse(here.said[0]!), {
    provider: "openai",
    fingerprint: a!.fingerprint,
    refused: true,
    probeAt: T0 + 2 * MINUTE,
    from: JSON.parse(here.said[0]!).from,
  });
  // Its own message comes back on the feed: ignored, even after the key recovered.
  now = T0 + 2 * MINUTE;
  const probed = Array.from({ length: 100 }, (_, i) => affinityHash(`own ${i}`)).find(
    (affinity) => pool.choose(affinity, [], now) === a,
  );
  assert.ok(probed !== undefined, "a call probes it");
  pools.succeeded(pool, a!);
  assert.equal(JSON.parse(here.said[1]!).recovered, true);
  here.hear(here.said[0]!);
  assert.equal(states(pool, now), ["healthy", "healthy", "healthy"], "an echo of its own refusal is not news");

  // Another instance's word: a refusal probed in a year waits an hour at most; a cooldown of years waits the cap.
  here.hear(
    encodeChange(
      { provider: "openai", fingerprint: b!.fingerprint, refused: true, probeAt: now + 365 * 24 * 60 * MINUTE },
      "other",
    ),
  );
  here.hear(
    encodeChange({ provider: "openai", fingerprint: c!.fingerprint, until: now + 365 * 24 * 60 * MINUTE }, "other"),
  );
  assert.equal(states(pool, now), ["healthy", "refused", "cooling"]);
  assert.is(pool.health(now)[2]?.coolingUntil, now + CAP_MS);
  const onB = Array.from({ length: 200 }, (_, i) => affinityHash(`other ${i}`)).find(
    (affinity) => pool.choose(affinity, [], now + 60 * MINUTE) === b,
  );
  assert.ok(onB !== undefined, "probed within the hour");
  here.hear(encodeChange({ provider: "openai", fingerprint: b!.fingerprint, recovered: true }, "other"));
  assert.is(states(pool, now)[1], "healthy", "another instance's successful probe brings it back");
  // An instance of the older version says refused without a probe time: the first back-off.
  here.hear(JSON.stringify({ provider: "openai", fingerprint: b!.fingerprint, refused: true }));
  assert.is(states(pool, now + 2 * MINUTE - 1)[1], "refused");
  assert.is.not(pool.choose(onB!, [], now + 2 * MINUTE - 1), b);
  assert.is(pool.choose(onB!, [], now + 2 * MINUTE), b);
});

test("shared messages: malformed ones and one's own are dropped", () => {
  assert.is(decodeChange("not json", "me"), undefined);
  assert.is(decodeChange("null", "me"), undefined);
  assert.is(decodeChange(JSON.stringify({ provider: "p", fingerprint: "f" }), "me"), undefined, "says nothing");
  assert.is(decodeChange(JSON.stringify({ provider: "p", fingerprint: "f", until: "soon" }), "me"), undefined);
  assert.is(decodeChange(encodeChange({ provider: "p", fingerprint: "f", until: 5 }, "me"), "me"), undefined);
  assert.equal(decodeChange(encodeChange({ provider: "p", fingerprint: "f", until: 5 }, "you"), "me"), {
    provider: "p",
    fingerprint: "f",
    until: 5,
  });
  assert.equal(
    decodeChange(JSON.stringify({ provider: "p", fingerprint: "f", refused: true, probeAt: Number.NaN }), "me"),
    { provider: "p", fingerprint: "f", refused: true },
  );
});

test.run();

import * as assert from "uvu/assert";
import { generationMemo, type Generations } from "../../../server/engine/governance/generation-memo.js";
import { suite } from "../../support/suite.js";

/**
 * The governance cache's memo (server/engine/governance/generation-memo.ts) with a counting loader
 * and a hand-driven feed.
 */
const test = suite("governance cache: generation memo");

function harness(bounds = { maxEntries: 4, maxUnknown: 3, ttlMs: 60_000 }) {
  const feed = { generation: 0, live: true };
  const generations: Generations = { current: () => feed.generation, live: () => feed.live };
  const loads: string[] = [];
  const keys = new Set(["real-1", "real-2"]);
  const lookup = generationMemo(
    generations,
    bounds,
    async (id: string) => {
      loads.push(id);
      return keys.has(id) ? { id } : undefined;
    },
    (value) => value !== undefined,
  );
  return { feed, loads, keys, lookup: (id: string) => lookup(id, id) };
}

test("a flood of unknown keys does not push a real caller out", async () => {
  const { loads, lookup } = harness();
  assert.equal(await lookup("real-1"), { id: "real-1" });
  for (let i = 0; i < 1_000; i++) assert.is(await lookup(`unknown-${i}`), undefined);
  loads.length = 0;
  assert.equal(await lookup("real-1"), { id: "real-1" });
  assert.equal(loads, [], "the real caller is still cached");
});

test("unknown keys are remembered too, within their own bound", async () => {
  const { loads, lookup } = harness();
  await lookup("unknown-a");
  await lookup("unknown-a");
  assert.equal(loads, ["unknown-a"]);
  for (const id of ["unknown-b", "unknown-c", "unknown-d"]) await lookup(id);
  loads.length = 0;
  await lookup("unknown-a");
  assert.equal(loads, ["unknown-a"], "the oldest unknown went when the fourth came");
});

test("known values are bounded, least recently used out first", async () => {
  const { loads, keys, lookup } = harness();
  for (const id of ["k1", "k2", "k3", "k4"]) keys.add(id);
  for (const id of ["k1", "k2", "k3", "k4"]) await lookup(id);
  await lookup("k1");
  keys.add("k5");
  await lookup("k5");
  loads.length = 0;
  await lookup("k1");
  await lookup("k2");
  assert.equal(loads, ["k2"], "k2 was the least recently used");
});

test("a change starts a new generation: nothing loaded before it is served", async () => {
  const { feed, loads, keys, lookup } = harness();
  await lookup("real-1");
  keys.delete("real-1");
  feed.generation++;
  assert.is(await lookup("real-1"), undefined);
  assert.equal(loads, ["real-1", "real-1"]);
});

test("a load that began before a change and ended after it is not kept", async () => {
  const feed = { generation: 0, live: true };
  let release: (value: string) => void = () => {};
  let loads = 0;
  const lookup = generationMemo(
    { current: () => feed.generation, live: () => feed.live },
    { maxEntries: 4, maxUnknown: 4, ttlMs: 60_000 },
    () => {
      loads++;
      return new Promise<string>((resolve) => (release = resolve));
    },
  );
  const first = lookup("a", undefined);
  feed.generation++;
  release("old");
  assert.is(await first, "old");
  const second = lookup("a", undefined);
  release("new");
  assert.is(await second, "new");
  assert.is(loads, 2);
});

test("concurrent lookups share one load; a failed load is not remembered", async () => {
  let loads = 0;
  let fail = true;
  const lookup = generationMemo(
    { current: () => 0, live: () => true },
    { maxEntries: 4, maxUnknown: 4, ttlMs: 60_000 },
    async () => {
      loads++;
      if (fail) throw new Error("database down");
      return "ok";
    },
  );
  const failed = await Promise.allSettled([lookup("a", undefined), lookup("a", undefined)]);
  assert.equal(
    failed.map((r) => r.status),
    ["rejected", "rejected"],
  );
  assert.is(loads, 1);
  fail = false;
  assert.is(await lookup("a", undefined), "ok");
  assert.is(loads, 2);
});

test("without the feed, every lookup loads and nothing is kept", async () => {
  const { feed, loads, lookup } = harness();
  feed.live = false;
  await lookup("real-1");
  await lookup("real-1");
  feed.live = true;
  await lookup("real-1");
  assert.equal(loads, ["real-1", "real-1", "real-1"]);
});

test.run();

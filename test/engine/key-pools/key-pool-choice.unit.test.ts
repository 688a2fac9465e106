import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { affinityOf } from "../../../server/engine/key-pools/key-pools.js";
import { affinityHash } from "../../../server/engine/key-pools/key-choice.js";
import { promptPrefix } from "../../../server/engine/key-pools/prompt-prefix.js";
import { newPool, T0, wins } from "./key-pool-fixture.js";

/**
 * Which key of a pool serves a call: by weight, and sticky per session or prompt beginning. No
 * gateway, no database.
 */
const test = suite("key pools: choice");

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
test.run();

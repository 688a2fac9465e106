import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { KeyPools } from "../../../server/engine/key-pools/key-pools.js";
import { affinityHash } from "../../../server/engine/key-pools/key-choice.js";
import { decodeChange, encodeChange, KEY_POOLS_CHANNEL } from "../../../server/engine/key-pools/pool-sharing.js";
import { createLogger } from "../../../server/platform/logger.js";
import type { NotificationFeed } from "../../../server/platform/db/notification-feed.js";
import { CAP_MS, choice, MINUTE, provider, states, status, T0 } from "./key-pool-fixture.js";

/** Verdicts told to the other instances over the notification feed, and what is heard from them. */
const test = suite("key pools: shared between instances");

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

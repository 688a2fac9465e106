import * as assert from "uvu/assert";
import { at } from "../../support/http.js";
import { ChatStream, contentOf, finishOf, isFinal, runtimeSuite } from "../../support/intern-runtime.js";

/**
 * 100 intern streams at once through one gateway, each silent long enough for keepalives: the
 * model answers 600 ms after it is called and keepalives come after 200 ms of silence, so every
 * stream must show `: keepalive` comments and still end complete.
 */
const STREAMS = 100;
const test = runtimeSuite("interns: 100 concurrent streams with keepalives", {
  settings: { GATEWAY_INTERN_MAX_OPEN_RUNS: String(STREAMS) },
  intern: "crowded",
});

test(`${STREAMS} concurrent streams each get keepalives and their complete answer`, async ({ env, internId }) => {
  env.upstream.scripts.define("slow-start", (conversation) => ({
    reply: `Answer to ${String(conversation[0]?.content).replace("[script:slow-start] ", "")}`,
    delayMs: 600,
  }));
  const results = await Promise.all(
    Array.from({ length: STREAMS }, async (_, i) => {
      const stream = await ChatStream.open(env.gw.url, env.key, internId, {
        stream: true,
        messages: [{ role: "user", content: `[script:slow-start] question-${i}` }],
      });
      assert.is(stream.status, 200, JSON.stringify(stream.body));
      const events = await stream.rest();
      return { i, events, keepalives: stream.keepalives };
    }),
  );
  const sessions = new Set<string>();
  for (const { i, events, keepalives } of results) {
    assert.ok(keepalives >= 1, `stream ${i} got a keepalive while the model was silent`);
    assert.is(contentOf(events), `Answer to question-${i}`);
    assert.is(finishOf(events.at(-3)), "stop");
    assert.ok(isFinal(events.at(-2)));
    assert.is(events.at(-1), "[DONE]");
    sessions.add(at(events.at(-2), "session_id") as string);
  }
  assert.is(sessions.size, STREAMS, "every stream is its own session");
});

test.run();

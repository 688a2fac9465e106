import * as assert from "uvu/assert";
import { at } from "../../support/http.js";
import { ChatStream, contentOf, promptBody, runtimeSuite } from "../../support/intern-runtime.js";

/**
 * Characters of 2, 3 and 4 UTF-8 bytes through every stream of a run: the model's event stream to
 * the host's agent, the host's NDJSON to the relay, the relay's SSE to the client. Each word is
 * about 225 KB, so each crosses many socket reads on every hop; with 9-byte groups of characters,
 * most of those cuts fall inside a character, which must still arrive whole.
 */
const test = runtimeSuite("interns: multi-byte characters across chunk boundaries", { intern: "polyglot" });

const WORDS = ["é中😀", "ü語🎉", "ñ字🚀"].map((group) => group.repeat(25_000));

test(
  "content with multi-byte characters reaches the client intact, " + "and the session's conversation keeps it intact",
  async ({ env, internId }) => {
    const reply = WORDS.join(" ");
    env.upstream.scripts.define("polyglot", [{ reply }]);
    const stream = await ChatStream.open(env.gw.url, env.key, internId, promptBody("[script:polyglot] speak"));
    assert.is(stream.status, 200, JSON.stringify(stream.body));
    const events = await stream.rest();
    const content = contentOf(events);
    assert.not.ok(content.includes("\uFFFD"), "no character was replaced");
    assert.ok(content === reply, `the content arrived as sent (${content.length} of ${reply.length} characters)`);

    // The agent stored what it read: the next run of the session sends it back to the model unchanged.
    const sessionId = at(events.at(-2), "session_id") as string;
    env.upstream.scripts.define("recall", [{ reply: "recalled" }]);
    env.upstream.requests.length = 0;
    const next = await ChatStream.open(
      env.gw.url,
      env.key,
      internId,
      promptBody("[script:recall] again", { session_id: sessionId }),
    );
    assert.is(contentOf(await next.rest()), "recalled");
    const messages = at(env.upstream.requests[0]?.body, "messages") as Array<Record<string, unknown>>;
    const stored = messages.find((message) => message.role === "assistant")?.content;
    assert.ok(stored === reply, "the stored conversation holds the reply as sent");
  },
);

test.run();

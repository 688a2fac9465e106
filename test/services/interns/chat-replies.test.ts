import * as assert from "uvu/assert";
import type { RunEvent } from "../../../wire/host-protocol.js";
import { readLines } from "../../../server/engine/providers/line-reader.js";
import { at } from "../../support/http.js";
import { daemonAccess, hostRuns, runRows, type DaemonAccess } from "../../support/intern-host-api.js";
import {
  answerBody,
  ChatStream,
  contentOf,
  pausedQuestion,
  promptBody,
  runtimeSuite,
  shellStep,
} from "../../support/intern-runtime.js";

/**
 * Who may go on with a run (docs/api/interns.md): of concurrent replies to one question exactly one streams
 * the rest of the run, the others are 409 `interaction_not_pending`; and a chat client leaving a
 * run cancels it only when no other stream watches it (the host's rule), so a terminal client in
 * host mode watching the same run is not cut off.
 */
const test = runtimeSuite("interns: concurrent replies and watchers of one run", { intern: "contested" });

/** A terminal client in host mode following a run's events (host-protocol.ts) through its end. */
async function watch(access: DaemonAccess, runId: string): Promise<AsyncIterator<string>> {
  const res = await fetch(`${access.origin}/runs/${runId}/events?after=0`, {
    headers: { authorization: `Bearer ${access.token}` },
  });
  assert.is(res.status, 200);
  return readLines(res.body!)[Symbol.asyncIterator]();
}

async function untilEnd(lines: AsyncIterator<string>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for (let line = await lines.next(); !line.done; line = await lines.next()) {
    const event = JSON.parse(line.value) as RunEvent;
    events.push(event);
    if (event.type === "end") break;
  }
  return events;
}

test(
  "concurrent replies to one question: " +
    "exactly one streams the rest of the run, the others get 409 interaction_not_pending",
  async ({ env, internId }) => {
    env.upstream.scripts.define("race", [shellStep("echo raced"), { reply: "after the race" }]);
    const { question, sessionId } = await pausedQuestion(env, internId, "race");
    const replies = await Promise.all(
      Array.from({ length: 6 }, () =>
        ChatStream.open(env.gw.url, env.key, internId, answerBody(sessionId, question, "allow_once")),
      ),
    );
    const streams = replies.filter((reply) => reply.isStream);
    assert.is(streams.length, 1, `statuses: ${replies.map((reply) => reply.status).join(", ")}`);
    for (const refused of replies.filter((reply) => !reply.isStream)) {
      assert.is(refused.status, 409, JSON.stringify(refused.body));
      assert.is(at(refused.body, "error", "metadata", "reason"), "interaction_not_pending");
      assert.is(at(refused.body, "error", "metadata", "retryable"), false);
    }
    assert.is(contentOf(await streams[0]!.rest()), "after the race");
    assert.equal(
      (await runRows(env, sessionId)).map((run) => run.status),
      ["completed"],
    );
  },
);

test(
  "a chat client leaving a run that a terminal client also watches does not cancel it; " + "the session then goes on",
  async ({ env, internId }) => {
    env.upstream.scripts.define("watched", [{ reply: "one two three four five six seven eight", chunkDelayMs: 100 }]);
    const chat = await ChatStream.open(env.gw.url, env.key, internId, promptBody("[script:watched] count"));
    assert.is(chat.status, 200, JSON.stringify(chat.body));
    await chat.until((payload) => contentOf([payload]) !== "");
    const access = await daemonAccess(env, internId);
    const run = (await hostRuns(access)).find((candidate) => candidate.status === "running")!;
    const terminal = await watch(access, run.id);

    chat.abort();
    const events = await untilEnd(terminal);
    const end = events.at(-1);
    assert.is(end?.type === "end" && end.status, "stop", JSON.stringify(end));
    assert.is(
      events.map((event) => (event.type === "content" ? event.text : "")).join(""),
      "one two three four five six seven eight",
    );

    // The relay could not know how the run ended; the next prompt of the session still starts a run.
    env.upstream.scripts.define("after-watch", [{ reply: "next run" }]);
    const next = await ChatStream.open(
      env.gw.url,
      env.key,
      internId,
      promptBody("[script:after-watch] again", { session_id: run.session_id }),
    );
    assert.is(next.status, 200, JSON.stringify(next.body));
    assert.is(contentOf(await next.rest()), "next run");
  },
);

test.run();

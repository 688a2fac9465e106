import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { MAX_UNREAD_MESSAGES } from "../../../intern-host/host-runs.js";
import { at, call, type Reply } from "../../support/http.js";
import { daemonAccess, hostRuns } from "../../support/intern-host-api.js";
import {
  answerBody,
  assertReason,
  ChatStream,
  contentOf,
  finishOf,
  pausedQuestion,
  promptBody,
  runningInternId,
  runtimeSuite,
  shellStep,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * Steering (a prompt to a session whose run is open) within the intern's limits: steers are turns
 * of GATEWAY_INTERN_TURNS_PER_MINUTE; a run holds a bounded number of unread ones (429
 * `rate_limited` beyond); one accepted while the model gives what would be its final answer is
 * still read. And the turn limit holds under concurrent prompts.
 */
const prompt = promptBody;

function post(env: RuntimeEnv, internId: string, body: unknown): Promise<Reply> {
  return call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, { key: env.key, body });
}

async function sessionCount(env: RuntimeEnv, internId: string): Promise<number> {
  const [row] = await env.gw.gateway.sequelize.query<{ n: string }>(
    "SELECT count(*) AS n FROM intern_sessions WHERE intern_id = :internId",
    { type: QueryTypes.SELECT, replacements: { internId } },
  );
  return Number(row!.n);
}

// ---------------------------------------------------------------------------------------------

const unlimited = runtimeSuite("interns: steering a run", { intern: "steered" });

unlimited(
  `a run holds at most ${MAX_UNREAD_MESSAGES} unread steering messages: one more is 429 rate_limited; ` +
    "the run reads those it took",
  async ({ env, internId }) => {
    env.upstream.scripts.define("inbox", [shellStep("echo inbox"), { reply: "done" }]);
    const { question, sessionId } = await pausedQuestion(env, internId, "inbox");
    for (let i = 0; i < MAX_UNREAD_MESSAGES; i++) {
      const steered = await post(env, internId, prompt(`note ${i}`, { session_id: sessionId }));
      assert.equal(steered.body, { session_id: sessionId, status: "steered" }, steered.text);
    }
    assertReason(
      await post(env, internId, prompt("one too many", { session_id: sessionId })),
      429,
      "rate_limited",
      true,
    );

    env.upstream.requests.length = 0;
    const resumed = await ChatStream.open(env.gw.url, env.key, internId, answerBody(sessionId, question, "allow_once"));
    assert.is(contentOf(await resumed.rest()), "done");
    const sent = (at(env.upstream.requests[0]?.body, "messages") as Array<Record<string, unknown>>)
      .filter((message) => message.role === "user")
      .map((message) => message.content);
    assert.equal(
      sent.slice(-MAX_UNREAD_MESSAGES),
      Array.from({ length: MAX_UNREAD_MESSAGES }, (_, i) => `note ${i}`),
    );
    assert.not.ok(sent.includes("one too many"));
  },
);

unlimited(
  "a steer accepted while the model gives its final answer gets a model call of its own",
  async ({ env, internId }) => {
    // The first call answers slowly and without a tool call: the steer lands during what would be the run's last call.
    env.upstream.scripts.define("late-steer", (conversation) => {
      if (!conversation.some((message) => message.role === "assistant"))
        return { reply: "one two three four five", chunkDelayMs: 300 };
      return { reply: ` / heard: ${String(conversation.at(-1)?.content)}` };
    });
    const stream = await ChatStream.open(env.gw.url, env.key, internId, prompt("[script:late-steer] talk"));
    assert.is(stream.status, 200, JSON.stringify(stream.body));
    const first = await stream.until((payload) => contentOf([payload]) !== "");
    const access = await daemonAccess(env, internId);
    const run = (await hostRuns(access)).find((candidate) => candidate.status === "running")!;
    const steered = await post(env, internId, prompt("use capitals", { session_id: run.session_id }));
    assert.equal(steered.body, { session_id: run.session_id, status: "steered" }, steered.text);
    const rest = await stream.rest();
    assert.is(contentOf([first, ...rest]), "one two three four five / heard: use capitals");
    assert.is(finishOf(rest.at(-3)), "stop");
  },
);

unlimited.run();

// ---------------------------------------------------------------------------------------------

const limited = runtimeSuite("interns: steers and concurrent prompts under the turn limit", {
  settings: { GATEWAY_INTERN_TURNS_PER_MINUTE: "3" },
});

limited(
  "steering messages are turns: past the limit a steer is 429 rate_limited, with Retry-After",
  async ({ env }) => {
    const internId = await runningInternId(env, "steerer");
    env.upstream.scripts.define("steer-limit", [shellStep("echo x"), { reply: "done" }]);
    const { sessionId } = await pausedQuestion(env, internId, "steer-limit");
    for (const note of ["first note", "second note"]) {
      const steered = await post(env, internId, prompt(note, { session_id: sessionId }));
      assert.equal(steered.body, { session_id: sessionId, status: "steered" }, steered.text);
    }
    const refused = await post(env, internId, prompt("third note", { session_id: sessionId }));
    assertReason(refused, 429, "rate_limited", true);
    assert.is(refused.headers.get("retry-after"), "60");
  },
);

limited(
  "concurrent prompts cannot pass the turn limit together; the refused ones leave no session",
  async ({ env }) => {
    const internId = await runningInternId(env, "crowd");
    env.upstream.scripts.define("crowd", [{ reply: "ok" }]);
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => ChatStream.open(env.gw.url, env.key, internId, prompt("[script:crowd] hi"))),
    );
    const streams = replies.filter((reply) => reply.isStream);
    for (const stream of streams) assert.is(contentOf(await stream.rest()), "ok");
    assert.is(streams.length, 3, `statuses: ${replies.map((reply) => reply.status).join(", ")}`);
    for (const reply of replies.filter((candidate) => !candidate.isStream))
      assert.is(at(reply.body, "error", "metadata", "reason"), "rate_limited");
    assert.is(await sessionCount(env, internId), 3);
  },
);

limited.run();

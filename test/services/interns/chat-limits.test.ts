import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../support/http.js";
import { eventually } from "../../support/eventually.js";
import { daemonAccess, hostApi, hostRuns, runRows } from "../../support/intern-host-api.js";
import {
  answerBody,
  assertReason,
  ChatStream,
  contentOf,
  finishOf,
  isFinal,
  isQuestion,
  pausedQuestion,
  promptBody,
  runningInternId,
  runtimeSuite,
  shellStep,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * The time limits and capacity limits of intern runs, each suite with its own settings: the
 * question deadline (rejected replies do not extend it), the run's own time limit, open runs per
 * intern (503 busy), turns per minute (429 rate_limited), the replay budget (410
 * attachment_failed) and a host that does not answer (504 timeout).
 */
const prompt = promptBody;

function post(env: RuntimeEnv, internId: string, body: unknown): Promise<Reply> {
  return call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, { key: env.key, body });
}

/**
 * A terminal client in host mode answers the question on the host; the run goes on unattached until
 * its next question.
 */
async function answeredOnTheHost(
  env: RuntimeEnv,
  internId: string,
  sessionId: string,
  toolCallId: string,
): Promise<void> {
  const access = await daemonAccess(env, internId);
  const run = (await hostRuns(access)).find((candidate) => candidate.session_id === sessionId)!;
  assert.is(
    (await hostApi(access, "POST", `/runs/${run.id}/answers`, { tool_call_id: toolCallId, answer: "allow_once" }))
      .status,
    202,
  );
  await eventually(() => hostRuns(access), "the run paused on its next question", {
    until: (runs) => {
      const pending = runs.find((candidate) => candidate.id === run.id)?.pending;
      return !!pending && pending.tool_call_id !== toolCallId;
    },
  });
}

// ---------------------------------------------------------------------------------------------

/**
 * Far longer than the steps a test takes while a question is pending, on a loaded machine too (a
 * rejected reply must reach the host before the deadline, a terminal's answer before the next
 * question's); only the test that waits for the deadline sees it pass.
 */
const QUESTION_DEADLINE_SECONDS = 5;
const deadline = runtimeSuite("interns: question deadline and replay of output", {
  settings: { GATEWAY_INTERN_INTERACTION_TIMEOUT_SECONDS: String(QUESTION_DEADLINE_SECONDS) },
  intern: "deadline",
});

deadline(
  "the deadline passes: the paused run is cancelled; " +
    "a rejected reply before it did not move it; the late answer is 409 interaction_not_pending",
  async ({ env, internId }) => {
    env.upstream.scripts.define("deadline", [shellStep("echo late"), { reply: "never" }]);
    const { question, sessionId, toolCallId } = await pausedQuestion(env, internId, "deadline");
    const access = await daemonAccess(env, internId);
    const pendingBefore = (await hostRuns(access)).find((run) => run.session_id === sessionId)!.pending!;
    assert.is(pendingBefore.tool_call_id, toolCallId);
    const [stored] = await env.gw.gateway.sequelize.query<{ deadline_at: Date; asked_at: Date }>(
      "SELECT deadline_at, asked_at FROM intern_questions WHERE tool_call_id = :toolCallId",
      {
        type: QueryTypes.SELECT,
        replacements: { toolCallId },
      },
    );
    assert.is(stored!.deadline_at.toISOString(), pendingBefore.deadline_at, "the relay stored the host's deadline");

    assertReason(await post(env, internId, answerBody(sessionId, question, "perhaps")), 400, "bad_request", false);
    const pendingAfter = (await hostRuns(access)).find((run) => run.session_id === sessionId)!.pending!;
    assert.is(pendingAfter.deadline_at, pendingBefore.deadline_at, "a rejected reply does not extend the deadline");

    await eventually(() => hostRuns(access), "the host cancelled the run at its deadline", {
      until: (runs) => runs.find((run) => run.session_id === sessionId)?.status === "ended",
    });
    assert.ok(Date.now() >= Date.parse(pendingBefore.deadline_at));
    assertReason(
      await post(env, internId, answerBody(sessionId, question, "allow_once")),
      409,
      "interaction_not_pending",
      false,
    );
    assert.equal(
      (await runRows(env, sessionId)).map((run) => run.status),
      ["cancelled"],
    );
    // The session goes on with a new run.
    env.upstream.scripts.define("after-deadline", [{ reply: "new run" }]);
    const next = await ChatStream.open(
      env.gw.url,
      env.key,
      internId,
      prompt("[script:after-deadline] hi", { session_id: sessionId }),
    );
    assert.is(contentOf(await next.rest()), "new run");
  },
);

deadline(
  "output produced while no stream was attached (a terminal answered the question) is replayed from the pause",
  async ({ env, internId }) => {
    env.upstream.scripts.define("replayed", [
      shellStep("echo first"),
      { reply: "Between the questions", ...shellStep("echo second") },
      { reply: "end" },
    ]);
    const { question, sessionId, toolCallId } = await pausedQuestion(env, internId, "replayed");
    await answeredOnTheHost(env, internId, sessionId, toolCallId);

    const resumed = await ChatStream.open(env.gw.url, env.key, internId, answerBody(sessionId, question, "allow_once"));
    assert.is(resumed.status, 200, JSON.stringify(resumed.body));
    const events = await resumed.rest();
    assert.is(contentOf(events), "Between the questions");
    const second = events.find(isQuestion);
    assert.ok(second, "the second question, asked while detached, is replayed");
    assert.is.not(at(second, "choices", 0, "delta", "tool_calls", 0, "id"), toolCallId);
    assert.is(finishOf(events.at(-3)), "tool_calls");
    assert.equal(
      (await runRows(env, sessionId)).map((row) => row.status),
      ["paused"],
    );
  },
);

deadline.run();

// ---------------------------------------------------------------------------------------------

const runLimit = runtimeSuite("interns: the run's own time limit", {
  settings: { GATEWAY_INTERN_RUN_TIMEOUT_SECONDS: "1" },
  intern: "time-limited",
});

runLimit(
  "a run past its time limit is ended by the intern while the client is connected: 410 run_ended",
  async ({ env, internId }) => {
    env.upstream.scripts.define("endless", [
      { reply: Array.from({ length: 40 }, (_, i) => `word${i}`).join(" "), chunkDelayMs: 100 },
    ]);
    const stream = await ChatStream.open(env.gw.url, env.key, internId, prompt("[script:endless] talk"));
    const events = await stream.rest();
    const error = events.find((payload) => finishOf(payload) === "error");
    assert.is(at(error, "error", "code"), 410);
    assert.is(at(error, "error", "metadata", "reason"), "run_ended");
    assert.match(at(error, "error", "message") as string, /time limit/);
    assert.ok(isFinal(events.at(-2)));
    assert.is(events.at(-1), "[DONE]");
    assert.equal(
      (await runRows(env, at(events.at(-2), "session_id") as string)).map((row) => row.status),
      ["ended"],
    );
  },
);

runLimit.run();

// ---------------------------------------------------------------------------------------------

// The host time limit applies to every call of this suite to its hosts, not only to the frozen
// one: generous, so that a busy machine's slow answer is not taken for a frozen host.
const capacity = runtimeSuite("interns: open runs, turns, replay budget, host time limit", {
  settings: {
    GATEWAY_INTERN_MAX_OPEN_RUNS: "1",
    GATEWAY_INTERN_TURNS_PER_MINUTE: "3",
    GATEWAY_INTERN_REPLAY_BYTES: "256",
    GATEWAY_INTERN_HOST_TIMEOUT_MS: "5000",
  },
});

async function sessionCount(env: RuntimeEnv, internId: string): Promise<number> {
  const [row] = await env.gw.gateway.sequelize.query<{ n: string }>(
    "SELECT count(*) AS n FROM intern_sessions WHERE intern_id = :internId",
    { type: QueryTypes.SELECT, replacements: { internId } },
  );
  return Number(row!.n);
}

capacity(
  "an intern holding its maximum of open runs across a question: 503 busy, retryable; " +
    "the refused prompt leaves no session",
  async ({ env }) => {
    const internId = await runningInternId(env, "busy");
    env.upstream.scripts.define("hold", [shellStep("echo held"), { reply: "released" }]);
    const { question, sessionId } = await pausedQuestion(env, internId, "hold");
    assertReason(await post(env, internId, prompt("another task")), 503, "busy", true);
    assert.is(await sessionCount(env, internId), 1);
    const resumed = await ChatStream.open(env.gw.url, env.key, internId, answerBody(sessionId, question, "allow_once"));
    assert.is(contentOf(await resumed.rest()), "released");
  },
);

capacity(
  "more turns per minute than allowed: 429 rate_limited, retryable, with Retry-After; " +
    "the refused prompt leaves no session",
  async ({ env }) => {
    const internId = await runningInternId(env, "chatty");
    env.upstream.scripts.define("quick", [{ reply: "ok" }]);
    for (let turn = 0; turn < 3; turn++) {
      const stream = await ChatStream.open(env.gw.url, env.key, internId, prompt("[script:quick] hi"));
      assert.is(stream.status, 200);
      await stream.rest();
    }
    const limited = await post(env, internId, prompt("[script:quick] hi"));
    assertReason(limited, 429, "rate_limited", true);
    assert.is(limited.headers.get("retry-after"), "60");
    assert.is(await sessionCount(env, internId), 3);
  },
);

capacity("a resume whose output since the pause was not all retained: 410 attachment_failed", async ({ env }) => {
  const internId = await runningInternId(env, "talkative");
  const long = Array.from({ length: 60 }, (_, i) => `chunk${i}`).join(" ");
  env.upstream.scripts.define("overflow", [
    shellStep("echo one"),
    { reply: long, ...shellStep("echo two") },
    { reply: "end" },
  ]);
  const { question, sessionId, toolCallId } = await pausedQuestion(env, internId, "overflow");
  await answeredOnTheHost(env, internId, sessionId, toolCallId);
  assertReason(
    await post(env, internId, answerBody(sessionId, question, "allow_once")),
    410,
    "attachment_failed",
    false,
  );
});

capacity("a host that accepts connections but does not answer: 504 timeout, retryable", async ({ env }) => {
  const internId = await runningInternId(env, "frozen");
  const pid = env.hosts.pid(internId)!;
  process.kill(pid, "SIGSTOP");
  try {
    assertReason(await post(env, internId, prompt("hello?")), 504, "timeout", true);
  } finally {
    process.kill(pid, "SIGCONT");
  }
  // The request it could not answer in time is dropped once it reads it: its run gets no slot.
  const access = await daemonAccess(env, internId);
  await eventually(() => hostApi(access, "GET", "/health"), "the abandoned run is gone", {
    until: (health) => at(health.body, "open_runs") === 0,
  });
  env.upstream.scripts.define("thawed", [{ reply: "back" }]);
  const stream = await ChatStream.open(env.gw.url, env.key, internId, prompt("[script:thawed] hi"));
  assert.is(contentOf(await stream.rest()), "back");
});

capacity.run();

import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { InternsService } from "../../../gen/gateway/v1/interns_pb.js";
import { InternFinishReason, InternMessageRole } from "../../../gen/gateway/v1/intern_chat_pb.js";
import { at, call } from "../../support/http.js";
import { eventually } from "../../support/eventually.js";
import { daemonAccess, hostRuns, runRows } from "../../support/intern-host-api.js";
import {
  answerBody,
  ChatStream,
  contentOf,
  finishOf,
  isFinal,
  isQuestion,
  promptBody,
  runtimeSuite,
  shellStep,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * The intern chat stream over real SSE (docs/api/interns.md): a scripted model in the mock upstream
 * drives a real agent in a real host process, whose model calls go through the gateway.
 */
const test = runtimeSuite("interns: chat stream and run transitions", { intern: "chatter" });
const prompt = promptBody;
const PERMISSION_OPTIONS = ["allow_once", "allow_always", "reject_once", "reject_always"];

function workDir(env: RuntimeEnv, internId: string): string {
  return path.join(env.dataDir, "interns", internId, "work");
}

async function open(env: RuntimeEnv, internId: string, body: unknown): Promise<ChatStream> {
  const stream = await ChatStream.open(env.gw.url, env.key, internId, body);
  assert.is(stream.status, 200, JSON.stringify(stream.body));
  assert.ok(stream.isStream, `an event stream, not ${JSON.stringify(stream.body)}`);
  return stream;
}

/** A question response read through `[DONE]`: the question chunk and the session id. */
async function untilQuestion(stream: ChatStream): Promise<{ question: unknown; sessionId: string; rest: unknown[] }> {
  const question = await stream.until(isQuestion);
  const rest = await stream.rest();
  const final = rest.find(isFinal);
  return { question, sessionId: at(final, "session_id") as string, rest };
}

test(
  "a prompt streams content, stop, the final chunk with session_id and usage, then [DONE]; " +
    "the model calls went through the gateway",
  async ({ env, internId }) => {
    env.upstream.scripts.define("hello", [{ reply: "Hello there, human" }]);
    const stream = await open(env, internId, prompt("[script:hello] greet me"));
    const events = await stream.rest();
    assert.equal(at(events[0], "choices", 0, "delta", "role"), "assistant", "the first chunk names the role");
    assert.not.ok(
      "tool_calls" in (at(events[0], "choices", 0, "delta") as object),
      "a content delta has no tool_calls, as in OpenAI's chunks",
    );
    assert.is(at(events[0], "object"), "chat.completion.chunk");
    assert.is(at(events[0], "model"), "mock/chat");
    assert.is(contentOf(events), "Hello there, human");
    const finish = events.at(-3);
    assert.is(finishOf(finish), "stop");
    const final = events.at(-2);
    assert.ok(isFinal(final), "an empty-choices final chunk");
    const sessionId = at(final, "session_id") as string;
    assert.match(sessionId, /^sess_/);
    assert.is(events.at(-1), "[DONE]");
    const ids = new Set(events.slice(0, -1).map((event) => at(event, "id")));
    assert.is(ids.size, 1, "one id for the response's chunks");

    // The usage is what the ledger recorded for the intern's own key in this session.
    await env.gw.gateway.deps.engine.settlement.barrier();
    const [ledger] = await env.gw.gateway.sequelize.query<{ calls: string; prompt: string; completion: string }>(
      `SELECT count(*) AS calls, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion FROM usage_ledger
      WHERE session_id = :sessionId AND key_hash IN (SELECT hash FROM api_keys WHERE intern_id = :internId)`,
      { type: QueryTypes.SELECT, replacements: { sessionId, internId } },
    );
    assert.is(Number(ledger!.calls), 1);
    assert.is(at(final, "usage", "prompt_tokens"), Number(ledger!.prompt));
    assert.is(at(final, "usage", "completion_tokens"), Number(ledger!.completion));
    assert.is(at(final, "usage", "total_tokens"), Number(ledger!.prompt) + Number(ledger!.completion));
    assert.ok((at(final, "usage", "cost") as number) > 0);
    assert.equal(
      (await runRows(env, sessionId)).map((run) => run.status),
      ["completed"],
    );
  },
);

test(
  "manual approval: question, tool_calls, final chunk with usage null, [DONE]; " +
    "the paused run outlives the closed stream; the answer resumes it",
  async ({ env, internId }) => {
    env.upstream.scripts.define("approve", [
      shellStep("echo approved-output > proof.txt; cat proof.txt"),
      { reply: "Ran it: {{last_tool_result}}" },
    ]);
    const stream = await open(env, internId, prompt("[script:approve] write the proof", { approval_mode: "manual" }));
    const before = await stream.rest();
    const questionAt = before.findIndex(isQuestion);
    assert.ok(questionAt > 0, "a question chunk");
    const question = before[questionAt];
    const call = at(question, "choices", 0, "delta", "tool_calls", 0) as Record<string, unknown>;
    assert.is(at(call, "index"), 0);
    assert.is(at(call, "type"), "function");
    assert.is(at(call, "function", "name"), "svc.provide_input");
    const args = JSON.parse(at(call, "function", "arguments") as string) as Record<string, unknown>;
    assert.is(args.kind, "permission");
    assert.is(args.operation, "shell");
    assert.equal(args.options, PERMISSION_OPTIONS);
    assert.is(finishOf(before[questionAt + 1]), "tool_calls");
    const final = before[questionAt + 2];
    assert.ok(isFinal(final));
    assert.is(at(final, "usage"), null, "usage is null after tool_calls");
    assert.equal(before.slice(questionAt + 3), ["[DONE]"]);
    assert.not.ok(existsSync(path.join(workDir(env, internId), "proof.txt")), "nothing ran before the permission");

    const sessionId = at(final, "session_id") as string;
    // The client is gone; the run waits on its question.
    assert.equal(
      (await runRows(env, sessionId)).map((run) => run.status),
      ["paused"],
    );
    const access = await daemonAccess(env, internId);
    assert.is((await hostRuns(access)).find((run) => run.session_id === sessionId)?.status, "paused");

    const resumed = await open(env, internId, answerBody(sessionId, question, "allow_once"));
    const after = await resumed.rest();
    assert.is(at(after[0], "choices", 0, "delta", "role"), "assistant");
    assert.match(contentOf(after), /Ran it: .*approved-output/);
    assert.is(finishOf(after.at(-3)), "stop");
    assert.is(at(after.at(-2), "session_id"), sessionId);
    assert.ok((at(after.at(-2), "usage", "total_tokens") as number) > 0, "the run's usage after stop");
    assert.is(after.at(-1), "[DONE]");
    assert.ok(
      existsSync(path.join(workDir(env, internId), "proof.txt")),
      "the shell ran in the intern's working directory",
    );
    assert.equal(
      (await runRows(env, sessionId)).map((run) => run.status),
      ["completed"],
    );
  },
);

test(
  "reject_once: the command does not run and the model hears so; " +
    "allow_always covers the run's next command; reject_always refuses without asking",
  async ({ env, internId }) => {
    env.upstream.scripts.define("reject", [shellStep("touch rejected.txt"), { reply: "Result: {{last_tool_result}}" }]);
    const first = await untilQuestion(
      await open(env, internId, prompt("[script:reject] try", { approval_mode: "manual" })),
    );
    const rejected = await (
      await open(env, internId, answerBody(first.sessionId, first.question, "reject_once"))
    ).rest();
    assert.match(contentOf(rejected), /did not allow/);
    assert.not.ok(existsSync(path.join(workDir(env, internId), "rejected.txt")));

    env.upstream.scripts.define("always", [
      shellStep("touch always-1.txt"),
      shellStep("touch always-2.txt"),
      { reply: "both done" },
    ]);
    const second = await untilQuestion(
      await open(env, internId, prompt("[script:always] twice", { approval_mode: "manual" })),
    );
    const rest = await (
      await open(env, internId, answerBody(second.sessionId, second.question, "allow_always"))
    ).rest();
    assert.not.ok(rest.some(isQuestion), "no second question");
    assert.is(contentOf(rest), "both done");
    assert.ok(existsSync(path.join(workDir(env, internId), "always-1.txt")));
    assert.ok(existsSync(path.join(workDir(env, internId), "always-2.txt")));

    env.upstream.scripts.define("never", [
      shellStep("touch never-1.txt"),
      shellStep("touch never-2.txt"),
      { reply: "Second: {{last_tool_result}}" },
    ]);
    const third = await untilQuestion(
      await open(env, internId, prompt("[script:never] twice", { approval_mode: "manual" })),
    );
    const refused = await (
      await open(env, internId, answerBody(third.sessionId, third.question, "reject_always"))
    ).rest();
    assert.not.ok(refused.some(isQuestion));
    assert.match(contentOf(refused), /Second: .*did not allow/);
    assert.not.ok(existsSync(path.join(workDir(env, internId), "never-1.txt")));
    assert.not.ok(existsSync(path.join(workDir(env, internId), "never-2.txt")));
  },
);

test("without approval_mode the run self-drives: the shell runs without a question", async ({ env, internId }) => {
  env.upstream.scripts.define("auto", [shellStep("pwd"), { reply: "At {{last_tool_result}}" }]);
  const events = await (await open(env, internId, prompt("[script:auto] where are you"))).rest();
  assert.not.ok(events.some(isQuestion));
  assert.ok(contentOf(events).includes(workDir(env, internId)), contentOf(events));
  assert.is(finishOf(events.at(-3)), "stop");
});

test("ask_user puts the model's own question; the answer must be one of its options and reaches the model", async ({
  env,
  internId,
}) => {
  env.upstream.scripts.define("ask", [
    {
      toolCall: {
        name: "ask_user",
        arguments: JSON.stringify({ question: "Which colour?", options: ["red", "blue"] }),
      },
    },
    { reply: "You said {{last_tool_result}}" },
  ]);
  const { question, sessionId } = await untilQuestion(await open(env, internId, prompt("[script:ask] pick")));
  const args = JSON.parse(
    at(question, "choices", 0, "delta", "tool_calls", 0, "function", "arguments") as string,
  ) as Record<string, unknown>;
  assert.equal(args, { kind: "question", question: "Which colour?", options: ["red", "blue"] });
  const events = await (await open(env, internId, answerBody(sessionId, question, "blue"))).rest();
  assert.match(contentOf(events), /You said .*blue/);
});

test("a later prompt in the session continues its conversation; the approval mode belongs to each run", async ({
  env,
  internId,
}) => {
  env.upstream.scripts.define("first", [{ reply: "I will remember the number 42" }]);
  const first = await (
    await open(env, internId, prompt("[script:first] remember 42", { approval_mode: "manual" }))
  ).rest();
  const sessionId = at(first.at(-2), "session_id") as string;
  env.upstream.scripts.define("second", [shellStep("echo second-run"), { reply: "ok" }]);
  env.upstream.requests.length = 0;
  const second = await (
    await open(env, internId, prompt("[script:second] what was it?", { session_id: sessionId }))
  ).rest();
  assert.not.ok(second.some(isQuestion), "this run was started without approval_mode: it self-drives");
  assert.is(at(second.at(-2), "session_id"), sessionId);
  const sent = JSON.stringify(env.upstream.requests[0]?.body);
  assert.ok(
    sent.includes("remember 42") && sent.includes("I will remember the number 42"),
    "the model sees the session's earlier turn",
  );
  assert.equal(
    (await runRows(env, sessionId)).map((run) => run.status),
    ["completed", "completed"],
  );
});

test(
  "a user message to a paused run answers {session_id, status: steered} " +
    "and reaches the model when the run goes on",
  async ({ env, internId }) => {
    env.upstream.scripts.define("steer-paused", [shellStep("echo steered"), { reply: "done" }]);
    const { question, sessionId } = await untilQuestion(
      await open(env, internId, prompt("[script:steer-paused] go", { approval_mode: "manual" })),
    );
    const steered = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
      key: env.key,
      body: prompt("also mention the weather", { session_id: sessionId }),
    });
    assert.is(steered.status, 200, steered.text);
    assert.match(steered.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(steered.body, { session_id: sessionId, status: "steered" });
    assert.equal(
      (await runRows(env, sessionId)).map((run) => run.status),
      ["paused"],
      "still paused on its question",
    );
    env.upstream.requests.length = 0;
    const events = await (await open(env, internId, answerBody(sessionId, question, "allow_once"))).rest();
    assert.is(contentOf(events), "done");
    const messages = at(env.upstream.requests[0]?.body, "messages") as Array<Record<string, unknown>>;
    assert.ok(
      messages.some((message) => message.role === "user" && message.content === "also mention the weather"),
      "the steering message is in the next model call",
    );
  },
);

test("a user message to a running run steers it", async ({ env, internId }) => {
  env.upstream.scripts.define("warmup", [{ reply: "ready" }]);
  const warm = await (await open(env, internId, prompt("[script:warmup] hi"))).rest();
  const sessionId = at(warm.at(-2), "session_id") as string;
  // The command waits for the test: the run is certainly running while it is steered.
  env.upstream.scripts.define("steer-running", [
    shellStep("touch started; while [ ! -f go ]; do sleep 0.02; done; echo released"),
    { reply: "finished" },
  ]);
  const stream = await open(env, internId, prompt("[script:steer-running] wait for go", { session_id: sessionId }));
  await stream.next();
  await eventually(() => existsSync(path.join(workDir(env, internId), "started")), "the command started");
  const steered = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
    key: env.key,
    body: prompt("use metric units", { session_id: sessionId }),
  });
  assert.equal(steered.body, { session_id: sessionId, status: "steered" });
  env.upstream.requests.length = 0;
  writeFileSync(path.join(workDir(env, internId), "go"), "");
  const rest = await stream.rest();
  assert.is(contentOf(rest), "finished");
  const messages = at(env.upstream.requests[0]?.body, "messages") as Array<Record<string, unknown>>;
  assert.ok(messages.some((message) => message.role === "user" && message.content === "use metric units"));
});

test("a client that disconnects while the run streams cancels the run", async ({ env, internId }) => {
  env.upstream.scripts.define("warmup-2", [{ reply: "ready" }]);
  const warm = await (await open(env, internId, prompt("[script:warmup-2] hi"))).rest();
  const sessionId = at(warm.at(-2), "session_id") as string;
  env.upstream.scripts.define("long", [
    { reply: "one two three four five six seven eight nine ten", chunkDelayMs: 200 },
  ]);
  const stream = await open(env, internId, prompt("[script:long] count slowly", { session_id: sessionId }));
  await stream.until((payload) => contentOf([payload]) !== "");
  stream.abort();
  await eventually(() => runRows(env, sessionId), "the run is recorded cancelled", {
    until: (rows) => rows.at(-1)?.status === "cancelled",
  });
  const access = await daemonAccess(env, internId);
  const runId = (await runRows(env, sessionId)).at(-1)!.id;
  await eventually(() => hostRuns(access), "the host ended the run", {
    until: (runs) => runs.find((run) => run.id === runId)?.status === "ended",
  });
  // The session has no open run: a new prompt starts one instead of steering.
  env.upstream.scripts.define("after-cancel", [{ reply: "fresh run" }]);
  const next = await (
    await open(env, internId, prompt("[script:after-cancel] again", { session_id: sessionId }))
  ).rest();
  assert.is(contentOf(next), "fresh run");
});

test("gRPC clients get the same run as server-streamed chunks", async ({ env, internId }) => {
  env.upstream.scripts.define("grpc", [{ reply: "Over gRPC" }]);
  const client = createClient(InternsService, createGrpcTransport({ baseUrl: env.gw.grpcUrl }));
  const chunks = [];
  for await (const event of client.chatCompletions(
    { internId, stream: true, messages: [{ role: InternMessageRole.USER, content: "[script:grpc] hi" }] },
    { headers: { authorization: `Bearer ${env.key}` } },
  )) {
    assert.is(event.event.case, "chunk");
    if (event.event.case === "chunk") chunks.push(event.event.value);
  }
  assert.is(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join(""), "Over gRPC");
  assert.is(chunks.at(-2)?.choices[0]?.finishReason, InternFinishReason.STOP);
  assert.match(chunks.at(-1)?.sessionId ?? "", /^sess_/);
  assert.ok((chunks.at(-1)?.usage?.totalTokens ?? 0n) > 0n);
});

test.run();

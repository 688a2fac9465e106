import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
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
  runningInternId,
  shellStep,
  startRuntimeGateway,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * Two gateway instances on one database: the pending question, the run and the host's address are
 * in Postgres, so a reply, a steering message, a cancel or a suspend may land on the instance that
 * did not start the run (or the host).
 */
const test = suite<{ env: RuntimeEnv; second: GatewayProcess; internId: string }>(
  "interns: chat across gateway instances",
);

test.before(async (context) => {
  context.env = await startRuntimeGateway();
  const config = context.env.gw.gateway.deps.config;
  context.second = await startGatewayProcess({
    databaseUrl: context.env.gw.databaseUrl,
    key: context.env.gw.key,
    env: {
      GATEWAY_CONFIG: context.env.configFile,
      GATEWAY_MASTER_KEY: config.masterKey!,
      GATEWAY_SSE_KEEPALIVE_MS: "200",
      GATEWAY_INTERN_TURNS_PER_MINUTE: "0",
      GATEWAY_RATE_LIMIT_REQUESTS: "0",
    },
  });
  context.internId = await runningInternId(context.env, "shared");
});
test.after(async ({ env, second }) => {
  await second.stop();
  await env.stop();
});

const prompt = promptBody;

test("a question asked through one instance is answered through the other, which streams the rest of the run", async ({
  env,
  second,
  internId,
}) => {
  env.upstream.scripts.define("cross", [
    { reply: "Before", ...shellStep("echo crossed") },
    { reply: "After: {{last_tool_result}}" },
  ]);
  const first = await ChatStream.open(
    env.gw.url,
    env.key,
    internId,
    prompt("[script:cross] go", { approval_mode: "manual" }),
  );
  const before = await first.rest();
  assert.is(contentOf(before), "Before");
  const question = before.find(isQuestion);
  const sessionId = at(before.find(isFinal), "session_id") as string;

  const resumed = await ChatStream.open(second.url, env.key, internId, answerBody(sessionId, question, "allow_once"));
  assert.is(resumed.status, 200, JSON.stringify(resumed.body));
  const after = await resumed.rest();
  assert.match(contentOf(after), /^After: .*crossed/);
  assert.is(finishOf(after.at(-3)), "stop");
  assert.is(at(after.at(-2), "session_id"), sessionId);
  assert.is(after.at(-1), "[DONE]");
  assert.equal(
    (await runRows(env, sessionId)).map((run) => run.status),
    ["completed"],
  );

  // The answered question is no longer pending, whichever instance is asked.
  const again = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
    key: env.key,
    body: answerBody(sessionId, question, "allow_once"),
  });
  assert.is(again.status, 409);
  assert.is(at(again.body, "error", "metadata", "reason"), "interaction_not_pending");
});

test("steering and a disconnect that cancels go through the other instance too", async ({ env, second, internId }) => {
  env.upstream.scripts.define("cross-steer", [
    shellStep("echo x"),
    { reply: "one two three four five six seven eight", chunkDelayMs: 150 },
  ]);
  const first = await ChatStream.open(
    env.gw.url,
    env.key,
    internId,
    prompt("[script:cross-steer] go", { approval_mode: "manual" }),
  );
  const before = await first.rest();
  const question = before.find(isQuestion);
  const sessionId = at(before.find(isFinal), "session_id") as string;
  const steered = await call(second.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
    key: env.key,
    body: prompt("note this", { session_id: sessionId }),
  });
  assert.equal(steered.body, { session_id: sessionId, status: "steered" });

  const resumed = await ChatStream.open(second.url, env.key, internId, answerBody(sessionId, question, "allow_once"));
  await resumed.until((payload) => contentOf([payload]) !== "");
  resumed.abort();
  await eventually(() => runRows(env, sessionId), "the other instance cancelled the run", {
    until: (rows) => rows.at(-1)?.status === "cancelled",
  });
  const access = await daemonAccess(env, internId);
  await eventually(() => hostRuns(access), "the host ended the run", {
    until: (runs) => runs.find((run) => run.session_id === sessionId)?.status === "ended",
  });
});

test(
  "suspending through the instance that did not start the host stops it; " + "neither instance logged the daemon token",
  async ({ env, second, internId }) => {
    const { token } = await daemonAccess(env, internId);
    const suspended = await call(second.url, "POST", `/api/v1/interns/${internId}/suspend`, { key: env.key });
    assert.is(suspended.status, 200, suspended.text);
    await eventually(() => env.hosts.pid(internId), "the host started by the first instance exited", {
      until: (pid) => pid === undefined,
    });
    const res = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
      key: env.key,
      body: prompt("hi"),
    });
    assert.is(at(res.body, "error", "metadata", "reason"), "intern_not_running");
    assert.ok(second.lines.length > 0);
    assert.not.ok(
      second.lines.some((line) => line.includes(token)),
      "the token is never logged",
    );
  },
);

test.run();

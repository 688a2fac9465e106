import * as assert from "uvu/assert";
import { at } from "../../support/http.js";
import { eventually } from "../../support/eventually.js";
import { ChatStream, contentOf, finishOf, promptBody, runtimeSuite, shellStep } from "../../support/intern-runtime.js";

/**
 * The session's conversation is saved after every step of a run, so a host that dies mid-run
 * (SIGKILL: no chance to save at the end) loses at most the step it was in. Short leases, so the
 * restarted host comes within about a second.
 */
const test = runtimeSuite("interns: conversation saved step by step", {
  settings: { GATEWAY_INTERN_LEASE_MS: "1500" },
  intern: "durable",
});

const scriptRequests = (env: { upstream: { requests: Array<{ body: unknown }> } }, marker: string) =>
  env.upstream.requests.filter((request) => JSON.stringify(request.body).includes(marker));

test("a host killed during a run's second step: the next run of the session still knows the first step", async ({
  env,
  internId,
}) => {
  // Step one's result is saved before step two's model call; step two then sleeps in the shell.
  env.upstream.scripts.define("two-steps", [
    shellStep("echo first-step-output"),
    shellStep("sleep 20"),
    { reply: "never" },
  ]);
  env.upstream.requests.length = 0;
  const stream = await ChatStream.open(env.gw.url, env.key, internId, promptBody("[script:two-steps] work"));
  assert.is(stream.status, 200, JSON.stringify(stream.body));
  await eventually(() => scriptRequests(env, "[script:two-steps]").length, "the second model call", {
    until: (calls) => calls >= 2,
  });

  const pid = env.hosts.pid(internId)!;
  process.kill(pid, "SIGKILL");
  const severed = await stream.rest();
  assert.is(finishOf(severed.at(-3)), "error");
  const sessionId = at(severed.at(-2), "session_id") as string;
  await eventually(() => env.hosts.pid(internId), "a new host runs the intern", {
    until: (next) => next !== undefined && next !== pid,
  });

  env.upstream.scripts.define("recall", [{ reply: "recalled" }]);
  env.upstream.requests.length = 0;
  // The new host is registered a moment after its process starts.
  const next = await eventually(
    () =>
      ChatStream.open(
        env.gw.url,
        env.key,
        internId,
        promptBody("[script:recall] what did you do?", { session_id: sessionId }),
      ),
    "the restarted intern takes prompts",
    {
      until: (stream) => stream.isStream,
    },
  );
  assert.is(contentOf(await next.rest()), "recalled");
  const sent = JSON.stringify(scriptRequests(env, "[script:recall]")[0]?.body);
  assert.ok(sent.includes("first-step-output"), "the first step's tool result is in the session's conversation");
});

test.run();

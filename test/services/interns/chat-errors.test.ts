import { writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
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
  pausedQuestion,
  promptBody,
  runningInternId,
  runtimeSuite,
  shellStep,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";
import { seedOrganization } from "../../support/seed.js";

/**
 * The reasons a chat request meets, each with its status and `retryable`, and the in-stream errors
 * `run_ended` and `stream_severed`.
 */
// A turn limit no test reaches, so that every prompt takes the intern's turn lock: the outage test
// parks a request on it.
const test = runtimeSuite("interns: chat errors and reasons", {
  intern: "errors",
  settings: { GATEWAY_INTERN_TURNS_PER_MINUTE: "1000000" },
});
const prompt = promptBody;

test.before(({ env }) => {
  env.upstream.scripts.define("ask", [shellStep("echo ok"), { reply: "done" }]);
  env.upstream.scripts.define("slow", [
    { reply: "one two three four five six seven eight nine ten eleven twelve", chunkDelayMs: 150 },
  ]);
});

function chatPath(internId: string): string {
  return `/api/v1/interns/${internId}/chat/completions`;
}

function post(env: RuntimeEnv, internId: string, body: unknown, key = env.key): Promise<Reply> {
  return call(env.gw.url, "POST", chatPath(internId), { key, body });
}

async function streaming(env: RuntimeEnv, internId: string, body: unknown): Promise<ChatStream> {
  const stream = await ChatStream.open(env.gw.url, env.key, internId, body);
  assert.is(stream.status, 200, JSON.stringify(stream.body));
  return stream;
}

test("malformed requests: 400 bad_request naming the problem", async ({ env, internId }) => {
  const cases: Array<[unknown, RegExp]> = [
    [{ messages: [{ role: "user", content: "hi" }] }, /stream must be true/],
    [{ stream: false, messages: [{ role: "user", content: "hi" }] }, /stream must be true/],
    [{ stream: true, messages: [{ role: "assistant", content: "hi" }] }, /last message must be a user prompt/],
    [{ stream: true, messages: [{ role: "user", content: "  " }] }, /non-empty content/],
    [{ stream: true, session_id: "sess_x", messages: [{ role: "tool", content: "allow_once" }] }, /tool_call_id/],
    [{ stream: true, messages: [{ role: "tool", tool_call_id: "call_1", content: "allow_once" }] }, /session_id/],
    [{ stream: true, session_id: "sess_x", messages: [{ role: "tool", tool_call_id: "call_1" }] }, /content/],
    [
      {
        stream: true,
        session_id: "sess_x",
        messages: [
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_other", type: "function", function: { name: "svc.provide_input", arguments: "{}" } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "allow_once" },
        ],
      },
      /echo the tool call call_1/,
    ],
    [
      {
        stream: true,
        session_id: "sess_x",
        messages: [
          { role: "tool", tool_call_id: "call_1", content: "allow_once" },
          { role: "tool", tool_call_id: "call_2", content: "allow_once" },
        ],
      },
      /one tool message/,
    ],
  ];
  for (const [body, message] of cases) {
    const res = await post(env, internId, body);
    assertReason(res, 400, "bad_request", false);
    assert.match(at(res.body, "error", "message") as string, message);
  }
  const mode = await post(env, internId, prompt("hi", { approval_mode: "sometimes" }));
  assert.is(mode.status, 400, mode.text);
  assert.match(mode.text, /approval_mode/);
  const noMessages = await post(env, internId, { stream: true, messages: [] });
  assert.is(noMessages.status, 400);
});

test(
  "an answer the intern does not accept: 400 bad_request; " + "the question stays pending and a valid answer resumes",
  async ({ env, internId }) => {
    const { question, sessionId } = await pausedQuestion(env, internId, "ask");
    assertReason(await post(env, internId, answerBody(sessionId, question, "maybe")), 400, "bad_request", false);
    const resumed = await streaming(env, internId, answerBody(sessionId, question, "allow_once"));
    assert.is(contentOf(await resumed.rest()), "done");
  },
);

test(
  "no pending question with this tool_call_id: 404 interaction_unknown; " +
    "answered already: 409 interaction_not_pending",
  async ({ env, internId }) => {
    const { question, sessionId } = await pausedQuestion(env, internId, "ask");
    const unknown = answerBody(sessionId, question, "allow_once");
    const messages = unknown.messages as Array<Record<string, unknown>>;
    messages[0] = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_unknown", type: "function", function: { name: "svc.provide_input", arguments: "{}" } }],
    };
    messages[1] = { role: "tool", tool_call_id: "call_unknown", content: "allow_once" };
    assertReason(await post(env, internId, unknown), 404, "interaction_unknown", false);
    assertReason(
      await post(env, internId, { ...answerBody("sess_00000000000000000000000000000000", question, "allow_once") }),
      404,
      "interaction_unknown",
      false,
    );
    // Ids with a character Postgres cannot store in text: the one text rule's 400, never a 500.
    const nul = answerBody(sessionId, question, "allow_once");
    (nul.messages as Array<Record<string, unknown>>)[1]!.tool_call_id = "call_\u0000";
    (nul.messages as Array<Record<string, unknown>>).shift();
    assertNulRefused(await post(env, internId, nul), "messages[0].tool_call_id");
    assertNulRefused(await post(env, internId, answerBody("sess_\u0000", question, "allow_once")), "session_id");

    await (await streaming(env, internId, answerBody(sessionId, question, "allow_once"))).rest();
    assertReason(
      await post(env, internId, answerBody(sessionId, question, "allow_once")),
      409,
      "interaction_not_pending",
      false,
    );
  },
);

test(
  "not_found: an unknown or invisible intern, an unknown session; " + "outside the programme the route does not exist",
  async ({ env, internId }) => {
    assertReason(await post(env, internId.replace(/^.{8}/, "00000000"), prompt("hi")), 404, "not_found", false);
    assertReason(await post(env, "not-a-uuid", prompt("hi")), 404, "not_found", false);
    assertReason(await post(env, internId, prompt("hi", { session_id: "sess_unknown" })), 404, "not_found", false);
    assertNulRefused(await post(env, internId, prompt("hi", { session_id: "sess_\u0000" })), "session_id");
    const outsider = await seedOrganization("outside-the-programme");
    assertReason(await post(env, internId, prompt("hi"), outsider.key), 404, "not_found", false);
    const otherInterns = await seedOrganization("other-interns", ["interns"]);
    assertReason(await post(env, internId, prompt("hi"), otherInterns.key), 404, "not_found", false);
    assert.is((await post(env, internId, prompt("hi"), "sk-not-a-key")).status, 401);
  },
);

test("an intern that is not running: 409 intern_not_running", async ({ env }) => {
  const created = await call(env.gw.url, "POST", "/api/v1/interns", {
    key: env.key,
    body: { name: "idle", model: "mock/chat", workspace_id: env.workspaceId },
  });
  assert.is(created.status, 201, created.text);
  assertReason(
    await post(env, at(created.body, "data", "id") as string, prompt("hi")),
    409,
    "intern_not_running",
    false,
  );
});

test("a body over 1,048,576 bytes: 413 payload_too_large", async ({ env, internId }) => {
  const res = await call(env.gw.url, "POST", chatPath(internId), {
    key: env.key,
    raw: JSON.stringify(prompt("x".repeat(1_048_576))),
  });
  assertReason(res, 413, "payload_too_large", false);
});

test("the intern's runtime fails: 500 internal_error, retryable", async ({ env, internId }) => {
  env.upstream.scripts.define("short", [{ reply: "short" }]);
  const events = await (await streaming(env, internId, prompt("[script:short] hi"))).rest();
  const sessionId = at(events.at(-2), "session_id") as string;
  // The host's stored conversation of the session is damaged.
  writeFileSync(path.join(env.dataDir, "interns", internId, "state", "sessions", `${sessionId}.json`), "{not json");
  assertReason(
    await post(env, internId, prompt("[script:short] again", { session_id: sessionId })),
    500,
    "internal_error",
    true,
  );
});

test("403 when the key's creator, or the intern's creator, left the organization", async ({ env, internId }) => {
  const member = await call(env.gw.url, "POST", "/api/v1/organization/members", {
    key: env.key,
    body: { email: "leaver@example.com" },
  });
  assert.is(member.status, 201, member.text);
  const userId = at(member.body, "data", "id") as string;
  const minted = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.key,
    body: { name: "member key", creator_user_id: userId },
  });
  const memberKey = at(minted.body, "key") as string;
  env.upstream.scripts.define("member", [{ reply: "hello member" }]);
  const theirs = await runningInternId(env, "members-intern", {}, memberKey);
  assert.is(
    contentOf(await (await ChatStream.open(env.gw.url, memberKey, internId, prompt("[script:member] hi"))).rest()),
    "hello member",
  );

  assert.is((await call(env.gw.url, "DELETE", `/api/v1/organization/members/${userId}`, { key: env.key })).status, 200);
  // Removal disables the member's keys; an admin re-enables this one, and intern chat still refuses it.
  assert.is((await post(env, internId, prompt("[script:member] hi"), memberKey)).status, 401);
  const hash = at(minted.body, "data", "hash") as string;
  assert.is(
    (await call(env.gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: env.key, body: { disabled: false } })).status,
    200,
  );
  const byKey = await post(env, internId, prompt("[script:member] hi"), memberKey);
  assert.is(byKey.status, 403, byKey.text);
  const byIntern = await post(env, theirs, prompt("[script:member] hi"));
  assert.is(byIntern.status, 403, byIntern.text);
});

test(
  "run_ended: the intern's host cancels a run while the client is connected: " +
    "error chunk 410, final chunk with usage, [DONE]",
  async ({ env, internId }) => {
    const stream = await streaming(env, internId, prompt("[script:slow] count"));
    await stream.until((payload) => contentOf([payload]) !== "");
    // A terminal client in host mode (GET /daemon) ends the run.
    const access = await daemonAccess(env, internId);
    const run = (await hostRuns(access)).find((candidate) => candidate.status === "running")!;
    assert.is((await hostApi(access, "DELETE", `/runs/${run.id}`)).status, 200);
    const rest = await stream.rest();
    const error = rest.find((payload) => finishOf(payload) === "error");
    assert.ok(error, JSON.stringify(rest));
    assert.is(at(error, "error", "code"), 410);
    assert.is(at(error, "error", "metadata", "reason"), "run_ended");
    assert.is(at(error, "error", "metadata", "retryable"), false);
    const final = rest.at(-2);
    assert.ok(isFinal(final));
    assert.is(at(final, "usage"), null, "the slow model call never finished, so no usage was reported");
    assert.is(rest.at(-1), "[DONE]");
    assert.equal(
      (await runRows(env, at(final, "session_id") as string)).map((row) => row.status),
      ["cancelled"],
    );
  },
);

test("run_ended: a model call the gateway refuses ends the run, with the failure in the message", async ({
  env,
  internId,
}) => {
  env.upstream.scripts.define("failing", [{ status: 500 }]);
  const rest = await (await streaming(env, internId, prompt("[script:failing] try"))).rest();
  const error = rest.find((payload) => finishOf(payload) === "error");
  assert.is(at(error, "error", "metadata", "reason"), "run_ended");
  assert.match(at(error, "error", "message") as string, /gateway answered 5\d\d/);
  assert.is(rest.at(-1), "[DONE]");
});

test("run_ended: suspending the intern ends its running run; then chat answers 409 intern_not_running", async ({
  env,
}) => {
  const id = await runningInternId(env, "suspended-mid-run");
  const stream = await streaming(env, id, prompt("[script:slow] count"));
  await stream.until((payload) => contentOf([payload]) !== "");
  const suspend = call(env.gw.url, "POST", `/api/v1/interns/${id}/suspend`, { key: env.key });
  const rest = await stream.rest();
  assert.is((await suspend).status, 200);
  assert.is(
    at(
      rest.find((payload) => finishOf(payload) === "error"),
      "error",
      "metadata",
      "reason",
    ),
    "run_ended",
  );
  assert.ok(isFinal(rest.at(-2)));
  assertReason(await post(env, id, prompt("hi")), 409, "intern_not_running", false);
});

test(
  "a database that goes away: " +
    "503 unavailable, retryable, from the first request on (the error interceptor's mapping, not a 500)",
  async ({ env, internId }) => {
    env.upstream.scripts.define("warm", [{ reply: "warm" }]);
    assert.is(contentOf(await (await streaming(env, internId, prompt("[script:warm] hi"))).rest()), "warm");
    const database = new URL(env.gw.databaseUrl).pathname.slice(1);
    const admin = new pg.Client(process.env.TEST_DATABASE_URL);
    await admin.connect();
    // Holds the intern's turn lock (the advisory lock every prompt takes in its transaction), so that
    // the request below is parked on a live pooled connection when the outage begins: its query then
    // fails as a plain query error (SQLSTATE 57P01), as one on a connection whose end the gateway has
    // not read yet does.
    const turnLock = new pg.Client(env.gw.databaseUrl);
    await turnLock.connect();
    try {
      const { rows } = await turnLock.query<{ pid: number }>(
        "SELECT pg_backend_pid() AS pid, pg_advisory_lock(hashtextextended('intern-turns:' || $1, 0))",
        [internId],
      );
      const parked = post(env, internId, prompt("hi"));
      await eventually(
        () => waitingForAdvisoryLock(admin, database),
        "the chat's query waits for the intern's turn lock",
      );
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
      // The pool's connections go; the governance feed's LISTEN connection stays, so callers are still
      // served from the cache and the chat's own queries are the ones that meet the outage.
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity " +
          "WHERE datname = $1 AND pid <> $2 AND query NOT LIKE 'LISTEN %'",
        [database, rows[0]!.pid],
      );
      assertReason(await parked, 503, "unavailable", true);
      // Then every query needs a connection the database refuses, or meets another cut one.
      assertReason(await post(env, internId, prompt("hi")), 503, "unavailable", true);
    } finally {
      await turnLock.end();
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  },
);

async function waitingForAdvisoryLock(admin: pg.Client, database: string): Promise<boolean> {
  const { rows } = await admin.query<{ waiting: number }>(
    "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = $1 " +
      "AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
    [database],
  );
  return rows[0]!.waiting > 0;
}

test(
  "stream_severed: the host dies mid-run: error chunk 410, final chunk, [DONE]; " + "then 502 intern_unreachable",
  async ({ env }) => {
    const id = await runningInternId(env, "crasher");
    const stream = await streaming(env, id, prompt("[script:slow] count"));
    await stream.until((payload) => contentOf([payload]) !== "");
    process.kill(env.hosts.pid(id)!, "SIGKILL");
    const rest = await stream.rest();
    const error = rest.find((payload) => finishOf(payload) === "error");
    assert.is(at(error, "error", "code"), 410);
    assert.is(at(error, "error", "metadata", "reason"), "stream_severed");
    const final = rest.at(-2);
    assert.ok(isFinal(final));
    assert.is(at(final, "usage"), null);
    assert.is(rest.at(-1), "[DONE]");
    assert.equal(
      (await runRows(env, at(final, "session_id") as string)).map((row) => row.status),
      ["unknown"],
    );
    await eventually(() => env.hosts.pid(id), "the manager noticed the exit", { until: (pid) => pid === undefined });
    assertReason(await post(env, id, prompt("hi")), 502, "intern_unreachable", true);
  },
);

function assertNulRefused(res: Reply, field: string): void {
  assert.is(res.status, 400, res.text);
  assert.is(
    at(res.body, "error", "message"),
    `${field} must not contain NUL characters (U+0000), which cannot be stored`,
  );
}

test.run();

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { readInternById } from "../../server/services/interns/intern-store.js";
import { at, call } from "../support/http.js";
import { eventually } from "../support/eventually.js";
import { alive, daemonAccess, hostApi } from "../support/intern-host-api.js";
import {
  ChatStream,
  contentOf,
  processesOf,
  runningInternId,
  runtimeSuite,
  shellResults,
  shellStep,
  type RuntimeEnv,
} from "../support/intern-runtime.js";
import { notRoot } from "../support/required-tools.js";

/**
 * Every shell step of the suite runs under this limit, so it is far above what a command takes
 * on a loaded machine; the one step that tests it runs far longer and is cut at the limit.
 */
const SHELL_TIMEOUT_MS = 5_000;

/**
 * The intern host as a process: started by the host manager on provision, its own working
 * directory, token-protected API, none of the gateway's credentials in its environment, shell
 * limits, and what suspend, provision and delete do to it.
 */
const test = runtimeSuite("interns: host processes", {
  settings: { GATEWAY_INTERN_SHELL_TIMEOUT_MS: String(SHELL_TIMEOUT_MS), GATEWAY_INTERN_SHELL_OUTPUT_BYTES: "300" },
});

interface HostRow {
  origin: string;
  sealed_token: Buffer;
  pid: number;
}

async function hostRow(env: RuntimeEnv, internId: string): Promise<HostRow | undefined> {
  const [row] = await env.gw.gateway.sequelize.query<HostRow>(
    "SELECT origin, sealed_token, pid FROM intern_hosts WHERE intern_id = :internId",
    {
      type: QueryTypes.SELECT,
      replacements: { internId },
    },
  );
  return row;
}

test(
  "provisioning starts a host process on 127.0.0.1 with its own working directory; " +
    "its API wants the token; the token is stored sealed",
  async ({ env }) => {
    const internId = await runningInternId(env, "housed");
    const access = await daemonAccess(env, internId);
    assert.match(access.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
    const row = (await hostRow(env, internId))!;
    assert.is(row.origin, access.origin);
    assert.is(row.pid, env.hosts.pid(internId));
    assert.not.ok(row.sealed_token.includes(Buffer.from(access.token)), "the stored token is sealed");
    assert.ok(existsSync(path.join(env.dataDir, "interns", internId, "work")));

    assert.is((await fetch(`${access.origin}/health`)).status, 401);
    assert.is((await fetch(`${access.origin}/health`, { headers: { authorization: "Bearer wrong" } })).status, 401);
    const health = await hostApi(access, "GET", "/health");
    assert.is(health.status, 200);
    assert.equal(health.body, { intern_id: internId, open_runs: 0 });

    // The host's own environment carries none of the gateway's credentials.
    const environ = readFileSync(`/proc/${row.pid}/environ`, "utf8");
    for (const name of [
      "DATABASE_URL",
      "GATEWAY_MASTER_KEY",
      "GATEWAY_BOOTSTRAP_KEY",
      "MOCK_UPSTREAM_KEY",
      "TEST_DATABASE_URL",
    ]) {
      assert.not.ok(environ.includes(`${name}=`), `${name} is not in the host's environment`);
    }

    // Every start is a new host: the earlier one held the key of an earlier provisioning.
    const steps: number[] = [];
    const intern = (await readInternById(env.gw.gateway.sequelize, internId))!;
    const again = await env.hosts.start(
      { intern, apiKey: "a newer key", onStep: (step) => steps.push(step.number), onExit: () => undefined },
      AbortSignal.timeout(10_000),
    );
    assert.equal(steps, [1, 2, 3, 4], "a whole boot");
    assert.is.not(again.token, access.token);
    assert.is.not(env.hosts.pid(internId), row.pid);
    assert.not.ok(alive(row.pid), "the earlier host is stopped");
  },
);

const ISOLATION =
  "each intern's shell is its own OS user (root gateway): it reads neither the gateway's files nor another intern's; " +
  "what it leaves running ends with its host";

if (notRoot(test, { suite: ISOLATION, why: "only root can run a shell as another user" })) {
  // What docs/api/interns.md ("Runtime settings") promises a gateway that is not root.
  test("not root: with no other user to run as, the shell is the gateway's own user", async ({ env }) => {
    const internId = await runningInternId(env, "unisolated");
    const [uid] = await shellResults(env, internId, "unisolated", ["id -u"]);
    assert.is(String(uid!.stdout).trim(), String(process.getuid?.()));
  });
} else {
  test(ISOLATION, async ({ env }) => {
    const first = await runningInternId(env, "isolated-a");
    const second = await runningInternId(env, "isolated-b");
    const [secondUid] = await shellResults(env, second, "iso-b", ["id -u", "echo private > note.txt"]);
    writeFileSync(path.join(env.dataDir, "probe.secret"), "the gateway's own", { mode: 0o600 });
    const home = (id: string) => path.join(env.dataDir, "interns", id);
    const results = await shellResults(env, first, "iso-a", [
      "id -u",
      `cat ${path.join(env.dataDir, "probe.secret")}`,
      `ls ${path.join(env.dataDir, "interns")}`,
      `cat ${path.join(home(second), "work", "note.txt")}`,
      `ls ${path.join(home(first), "state")}`,
      "nohup sleep 300 >/dev/null 2>&1 &",
    ]);
    const [uid, secret, listing, otherNote, state] = results;
    const firstUid = Number(String(uid!.stdout).trim());
    assert.ok(
      firstUid >= 100_000 && firstUid !== Number(String(secondUid!.stdout).trim()),
      `own uids: ${firstUid}, ${String(secondUid!.stdout)}`,
    );
    for (const [what, result] of [
      ["the gateway's files", secret],
      ["the list of interns", listing],
      ["another intern's files", otherNote],
      ["its host's sessions", state],
    ] as const) {
      assert.is.not(result!.exit_code, 0, `${what} are out of reach: ${JSON.stringify(result)}`);
      assert.match(String(result!.stderr), /Permission denied/);
    }
    await eventually(() => processesOf(firstUid), "the background command runs", { until: (pids) => pids.length > 0 });
    assert.is((await call(env.gw.url, "POST", `/api/v1/interns/${first}/suspend`, { key: env.key })).status, 200);
    await eventually(() => processesOf(firstUid), "nothing of the intern's user runs after its host stopped", {
      until: (pids) => pids.length === 0,
    });
  });
}

test("the shell is cut at its time limit and its output limit; its environment is its own", async ({ env }) => {
  const internId = await runningInternId(env, "limited");
  // It would print long after the limit: a shell that is not cut fails the test then instead of hanging it.
  const late = `sleep ${(SHELL_TIMEOUT_MS * 6) / 1000}; echo late`;
  env.upstream.scripts.define("limits", [
    shellStep(late),
    shellStep("head -c 5000 /dev/zero | tr '\\0' x"),
    shellStep("env"),
    { reply: "done" },
  ]);
  env.upstream.requests.length = 0;
  const stream = await ChatStream.open(env.gw.url, env.key, internId, {
    stream: true,
    messages: [{ role: "user", content: "[script:limits] test the limits" }],
  });
  assert.is(contentOf(await stream.rest()), "done");
  const messages = at(env.upstream.requests.at(-1)?.body, "messages") as Array<Record<string, unknown>>;
  const [slow, loud, environment] = messages
    .filter((message) => message.role === "tool")
    .map((message) => JSON.parse(message.content as string) as Record<string, unknown>);
  assert.is(slow!.timed_out, true);
  assert.is(slow!.stdout, "", "killed before it printed");
  assert.is(loud!.truncated, true);
  assert.is((loud!.stdout as string).length, 300);
  assert.match(
    environment!.stdout as string,
    new RegExp(`HOME=${path.join(env.dataDir, "interns", internId, "work")}`),
  );
  assert.not.match(environment!.stdout as string, /DATABASE_URL|MASTER_KEY|MOCK_UPSTREAM_KEY/);
});

test("suspend stops the host; provision starts a new one, and a session continues its conversation", async ({
  env,
}) => {
  const internId = await runningInternId(env, "sleeper");
  env.upstream.scripts.define("before-sleep", [{ reply: "remember the word banana" }]);
  const first = await (
    await ChatStream.open(env.gw.url, env.key, internId, {
      stream: true,
      messages: [{ role: "user", content: "[script:before-sleep] hi" }],
    })
  ).rest();
  const sessionId = at(first.at(-2), "session_id") as string;
  const oldPid = env.hosts.pid(internId)!;

  assert.is((await call(env.gw.url, "POST", `/api/v1/interns/${internId}/suspend`, { key: env.key })).status, 200);
  assert.is(env.hosts.pid(internId), undefined);
  assert.is(await hostRow(env, internId), undefined, "no host is recorded for a suspended intern");
  assert.throws(() => process.kill(oldPid, 0), "the old process is gone");

  assert.is((await call(env.gw.url, "POST", `/api/v1/interns/${internId}/provision`, { key: env.key })).status, 200);
  await eventually(() => call(env.gw.url, "GET", `/api/v1/interns/${internId}`, { key: env.key }), "running again", {
    until: (res) => at(res.body, "data", "status") === "running",
  });
  assert.is.not(env.hosts.pid(internId), oldPid);
  env.upstream.scripts.define("after-sleep", [{ reply: "yes" }]);
  env.upstream.requests.length = 0;
  await (
    await ChatStream.open(env.gw.url, env.key, internId, {
      stream: true,
      session_id: sessionId,
      messages: [{ role: "user", content: "[script:after-sleep] what word?" }],
    })
  ).rest();
  assert.ok(
    JSON.stringify(env.upstream.requests[0]?.body).includes("remember the word banana"),
    "the new host read the session's conversation",
  );
});

test("delete stops the host, forgets it and removes its files", async ({ env }) => {
  const internId = await runningInternId(env, "temporary");
  const pid = env.hosts.pid(internId)!;
  assert.ok(existsSync(path.join(env.dataDir, "interns", internId)));
  assert.is((await call(env.gw.url, "DELETE", `/api/v1/interns/${internId}`, { key: env.key })).status, 200);
  await eventually(
    () => call(env.gw.url, "GET", `/api/v1/interns/${internId}`, { key: env.key }),
    "the intern is gone",
    { until: (res) => res.status === 404 },
  );
  assert.is(env.hosts.pid(internId), undefined);
  assert.throws(() => process.kill(pid, 0));
  assert.is(await env.gw.gateway.deps.internHosts.access(internId, AbortSignal.timeout(5000)), undefined);
  await eventually(
    () => !existsSync(path.join(env.dataDir, "interns", internId)),
    "its working directory and sessions are removed",
  );
});

test.run();

/** This machine's first address other machines could use; loopback when it has none. */
const externalAddress =
  Object.values(os.networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === "IPv4" && !address.internal)?.address ?? "127.0.0.1";
const reachable = runtimeSuite("interns: hosts reachable from other machines", {
  settings: { GATEWAY_INTERN_HOST_LISTEN: "0.0.0.0", GATEWAY_INTERN_HOST_ADVERTISE: externalAddress },
});

reachable(
  "GATEWAY_INTERN_HOST_LISTEN and _ADVERTISE: " +
    "the host listens on every address, its origin names the advertised one, the relay uses it",
  async ({ env }) => {
    const internId = await runningInternId(env, "reachable");
    const access = await daemonAccess(env, internId);
    assert.match(access.origin, new RegExp(`^http://${externalAddress.replaceAll(".", "\\.")}:\\d+$`));
    assert.is((await hostApi(access, "GET", "/health")).status, 200);
    assert.is(
      (await hostApi({ ...access, origin: access.origin.replace(externalAddress, "127.0.0.1") }, "GET", "/health"))
        .status,
      200,
      "and on loopback",
    );
    env.upstream.scripts.define("reachable", [{ reply: "over the advertised origin" }]);
    const stream = await ChatStream.open(env.gw.url, env.key, internId, {
      stream: true,
      messages: [{ role: "user", content: "[script:reachable] hi" }],
    });
    assert.is(contentOf(await stream.rest()), "over the advertised origin");
  },
);

reachable.run();

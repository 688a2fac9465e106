import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { eventually } from "../../support/eventually.js";
import { alive } from "../../support/intern-host-api.js";
import {
  answerBody,
  ChatStream,
  contentOf,
  pausedQuestion,
  promptBody,
  runningInternId,
  runtimeSuite,
  shellStep,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * Interns outlive their hosts and gateway instances (server/services/interns/intern-supervisor.ts): a host
 * that exits is restarted with a fresh key, one that keeps dying ends `failed`, an instance that
 * dies or stops has its interns taken over by another, and work cut short by a crashed instance
 * (a boot, a teardown) is finished. Short leases, so that a lapse takes about a second.
 */
const LEASE = { GATEWAY_INTERN_LEASE_MS: "1500" };
const test = runtimeSuite("interns: runtime recovery", { settings: LEASE });

interface InternView {
  status: string;
  lastFailure: string | null;
}

async function internView(
  env: RuntimeEnv,
  internId: string,
  key = env.key,
  base = env.gw.url,
): Promise<InternView | undefined> {
  const res = await call(base, "GET", `/api/v1/interns/${internId}`, { key });
  if (res.status === 404) return undefined;
  return {
    status: at(res.body, "data", "status") as string,
    lastFailure: at(res.body, "data", "last_failure_message") as string | null,
  };
}

/** Which host process of this instance runs the intern, and the status the intern's record shows. */
async function hosting(
  env: RuntimeEnv,
  internId: string,
): Promise<{ pid: number | undefined; status: string | undefined }> {
  return { pid: env.hosts.pid(internId), status: (await internView(env, internId))?.status };
}

async function internKeyHashes(env: RuntimeEnv, internId: string): Promise<string[]> {
  const rows = await env.gw.gateway.sequelize.query<{ hash: string }>(
    "SELECT hash FROM api_keys WHERE intern_id = :internId",
    { type: QueryTypes.SELECT, replacements: { internId } },
  );
  return rows.map((row) => row.hash);
}

async function recordedHostPid(env: RuntimeEnv, internId: string): Promise<number | undefined> {
  const [row] = await env.gw.gateway.sequelize.query<{ pid: number }>(
    "SELECT pid FROM intern_hosts WHERE intern_id = :internId",
    { type: QueryTypes.SELECT, replacements: { internId } },
  );
  return row?.pid;
}

/** Kills the intern's host process and waits until a new one runs the intern. */
async function crashAndAwaitRestart(env: RuntimeEnv, internId: string): Promise<number> {
  const pid = env.hosts.pid(internId)!;
  process.kill(pid, "SIGKILL");
  const restarted = await eventually(() => hosting(env, internId), "a new host runs the intern", {
    until: (now) => now.pid !== undefined && now.pid !== pid && now.status === "running",
  });
  return restarted.pid!;
}

async function assertChats(env: RuntimeEnv, internId: string, base = env.gw.url): Promise<void> {
  env.upstream.scripts.define("alive", [{ reply: "still here" }]);
  const stream = await ChatStream.open(base, env.key, internId, promptBody("[script:alive] are you there?"));
  assert.is(stream.status, 200, JSON.stringify(stream.body));
  assert.is(contentOf(await stream.rest()), "still here");
}

test("a host that crashes is restarted with a fresh key; its open runs are ended; chat works again", async ({
  env,
}) => {
  const internId = await runningInternId(env, "phoenix");
  env.upstream.scripts.define("before-crash", [shellStep("echo never")]);
  const paused = await pausedQuestion(env, internId, "before-crash");
  const [oldKey] = await internKeyHashes(env, internId);

  await crashAndAwaitRestart(env, internId);
  const view = (await internView(env, internId))!;
  assert.match(view.lastFailure ?? "", /stopped unexpectedly/, "the record says why it was restarted");
  const keys = await internKeyHashes(env, internId);
  assert.is(keys.length, 1);
  assert.is.not(keys[0], oldKey, "the old host's key is revoked, the new host has its own");

  // The paused run went with the old host.
  const answer = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
    key: env.key,
    body: answerBody(paused.sessionId, paused.question, "allow_once"),
  });
  assert.is(answer.status, 409, answer.text);
  assert.is(at(answer.body, "error", "metadata", "reason"), "interaction_not_pending");
  await assertChats(env, internId);
});

test("a host that keeps dying ends failed with the reason, its key revoked; provisioning it again works", async ({
  env,
}) => {
  const internId = await runningInternId(env, "fragile");
  for (let crash = 1; crash <= 3; crash++) await crashAndAwaitRestart(env, internId);
  process.kill(env.hosts.pid(internId)!, "SIGKILL");
  const failed = await eventually(() => internView(env, internId), "the intern fails", {
    until: (view) => view?.status === "failed",
  });
  assert.match(failed?.lastFailure ?? "", /stopped unexpectedly 4 times within 10 minutes/);
  assert.equal(await internKeyHashes(env, internId), []);
  assert.is(env.hosts.pid(internId), undefined);

  assert.is((await call(env.gw.url, "POST", `/api/v1/interns/${internId}/provision`, { key: env.key })).status, 200);
  await eventually(() => internView(env, internId), "running again", { until: (view) => view?.status === "running" });
  // A fresh start: the earlier crashes no longer count.
  await crashAndAwaitRestart(env, internId);
  await assertChats(env, internId);
});

test("a boot and a teardown cut short by a crashed instance are finished by another", async ({ env }) => {
  const { sequelize } = env.gw.gateway;
  const created = await call(env.gw.url, "POST", "/api/v1/interns", {
    key: env.key,
    body: { name: "orphan", model: "mock/chat", workspace_id: env.workspaceId },
  });
  const orphan = at(created.body, "data", "id") as string;
  // What a crashed instance leaves behind: provisioning under its lapsed lease, no host anywhere.
  await sequelize.query(
    "UPDATE interns SET status = 'provisioning', runtime_owner = 'crashed-instance', " +
      "runtime_lease_until = now() - interval '1 second' WHERE id = :id",
    {
      replacements: { id: orphan },
    },
  );
  await eventually(() => internView(env, orphan), "the boot is finished", {
    until: (view) => view?.status === "running",
  });
  assert.ok(env.hosts.pid(orphan), "this instance hosts it now");
  await assertChats(env, orphan);

  const doomed = await runningInternId(env, "doomed");
  const pid = env.hosts.pid(doomed)!;
  await sequelize.query(
    "UPDATE interns SET status = 'destroying', runtime_owner = 'crashed-instance', " +
      "runtime_lease_until = now() - interval '1 second' WHERE id = :id",
    {
      replacements: { id: doomed },
    },
  );
  await eventually(() => internView(env, doomed), "the teardown is finished", { until: (view) => view === undefined });
  assert.not.ok(alive(pid), "its host is stopped");
});

test(
  "a gateway instance of this machine that dies has its interns taken over at once; " +
    "one that stops hands them over",
  async ({ env }) => {
    const config = env.gw.gateway.deps.config;
    const other = (lease: string): Promise<GatewayProcess> =>
      startGatewayProcess({
        databaseUrl: env.gw.databaseUrl,
        key: env.gw.key,
        env: {
          GATEWAY_CONFIG: env.configFile,
          GATEWAY_MASTER_KEY: config.masterKey!,
          GATEWAY_INTERN_TURNS_PER_MINUTE: "0",
          GATEWAY_RATE_LIMIT_REQUESTS: "0",
          GATEWAY_INTERN_LEASE_MS: lease,
        },
      });

    // Its lease would last ten minutes: only seeing that its process is gone explains the take-over
    // (an instance of another machine is taken over when its lease lapses, as in the test above).
    const dying = await other("600000");
    try {
      const internId = await runningInternId({ ...env, gw: { ...env.gw, url: dying.url } }, "survivor");
      const oldPid = (await recordedHostPid(env, internId))!;
      assert.is(env.hosts.pid(internId), undefined, "the other instance hosts it");
      dying.child.kill("SIGKILL");
      await dying.exited;
      await eventually(() => hosting(env, internId), "this instance hosts it now", {
        until: (now) => now.pid !== undefined && now.status === "running",
      });
      await eventually(() => !alive(oldPid), "the dead instance's host went with it");
      await assertChats(env, internId);
    } finally {
      await dying.stop();
    }

    // A lease far longer than the wait below: only the hand-over at shutdown can explain the take-over.
    const stopping = await other("600000");
    try {
      const internId = await runningInternId({ ...env, gw: { ...env.gw, url: stopping.url } }, "handed-over");
      assert.is(env.hosts.pid(internId), undefined);
      await stopping.stop();
      await eventually(() => hosting(env, internId), "this instance hosts it now", {
        until: (now) => now.pid !== undefined && now.status === "running",
      });
      await assertChats(env, internId);
    } finally {
      await stopping.stop();
    }
  },
);

test.run();

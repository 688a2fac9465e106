import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { at, call } from "../../support/http.js";
import { createdIntern, runningIntern, startInternsGateway, type InternsEnv } from "../../support/interns.js";

/**
 * GET /interns/{id}/daemon (docs/api/interns.md). The daemon timeout (GATEWAY_INTERN_DAEMON_TIMEOUT_MS)
 * keeps its default except in the last suite, whose host never answers: a short one elsewhere
 * would be a time budget for every host that does answer.
 */
const test = suite<{ env: InternsEnv }>("intern daemon access");
test.before(async (ctx) => {
  ctx.env = await startInternsGateway();
});
test.after(async ({ env }) => {
  await env.stop();
});

const daemon = (env: InternsEnv, id: string, key = env.main.key) =>
  call(env.gw.url, "GET", `/api/v1/interns/${id}/daemon`, { key });

type Reveal = Record<string, unknown>;
async function reveals(env: InternsEnv, internId: string): Promise<Reveal[]> {
  return env.gw.gateway.sequelize.query("SELECT * FROM intern_daemon_reveals WHERE intern_id = :internId ORDER BY id", {
    type: QueryTypes.SELECT,
    replacements: { internId },
  });
}

function errorOf(body: unknown) {
  return {
    code: at(body, "error", "code"),
    reason: at(body, "error", "metadata", "reason"),
    retryable: at(body, "error", "metadata", "retryable"),
  };
}

test(
  "a running intern: {origin, token} with Cache-Control: " + "no-store, and the reveal is audited without the token",
  async ({ env }) => {
    const intern = await runningIntern(env, "attachable");
    const id = intern.id as string;
    const res = await daemon(env, id);
    assert.is(res.status, 200, res.text);
    assert.equal(res.body, env.hosts.hosts.get(id)!.access, "the host's origin and token");
    assert.is(res.headers.get("cache-control"), "no-store");
    const health = await fetch(`${at(res.body, "origin") as string}/health`, {
      headers: { authorization: `Bearer ${at(res.body, "token") as string}` },
    });
    assert.is(health.status, 200, "the revealed credential reaches the host");

    await daemon(env, id);
    const rows = await reveals(env, id);
    assert.is(rows.length, 2, "each reveal is recorded");
    const token = at(res.body, "token") as string;
    for (const row of rows) {
      assert.equal(Object.keys(row).sort(), [
        "caller_key_hash",
        "id",
        "intern_id",
        "organization_id",
        "revealed_at",
        "workspace_id",
      ]);
      assert.is(row.caller_key_hash, hashKey(env.main.key));
      assert.is(row.intern_id, id);
      assert.ok(row.revealed_at instanceof Date);
      assert.not.ok(JSON.stringify(row).includes(token), "the token is never stored");
    }
  },
);

test("an intern that is not running: 409 intern_not_running, nothing revealed", async ({ env }) => {
  const queued = await createdIntern(env, { name: "not-yet" });
  const res = await daemon(env, queued.id as string);
  assert.is(res.status, 409, res.text);
  assert.equal(errorOf(res.body), { code: 409, reason: "intern_not_running", retryable: false });
  assert.is(res.headers.get("cache-control"), null);

  const gone = await runningIntern(env, "host-gone");
  await env.hosts.stop(gone.id as string);
  const stale = await daemon(env, gone.id as string);
  assert.is(stale.status, 409, "a record that says running but whose host is gone: not running");
  assert.equal(errorOf(stale.body), { code: 409, reason: "intern_not_running", retryable: false });
  assert.is((await reveals(env, queued.id as string)).length + (await reveals(env, gone.id as string)).length, 0);
});

test("a host that cannot be reached: 500 internal_error", async ({ env }) => {
  const intern = await runningIntern(env, "crashed");
  const token = env.hosts.hosts.get(intern.id as string)!.access.token;
  await env.hosts.crash(intern.id as string);
  const res = await daemon(env, intern.id as string);
  assert.is(res.status, 500, res.text);
  assert.equal(errorOf(res.body), { code: 500, reason: "internal_error", retryable: true });
  assert.not.ok(res.text.includes(token));
});

test("unknown, malformed and out-of-scope interns: 404 not_found", async ({ env }) => {
  const intern = await runningIntern(env, "scoped");
  const cases: Array<[string, string]> = [
    ["0b7f3c9e-2d41-4f6a-9e8b-5c1d2a3f4e60", env.main.key],
    ["x", env.main.key],
    [intern.id as string, env.second.key],
    [intern.id as string, env.outsider.key],
  ];
  for (const [id, key] of cases) {
    const res = await daemon(env, id, key);
    assert.is(res.status, 404, `${id}: ${res.text}`);
    assert.equal(errorOf(res.body), { code: 404, reason: "not_found", retryable: false });
  }
  assert.is((await call(env.gw.url, "GET", `/api/v1/interns/${intern.id as string}/daemon`)).status, 401);
});

test.run();

const mute = suite<{ env: InternsEnv }>("intern daemon access: a host that does not answer");
mute.before(async (ctx) => {
  ctx.env = await startInternsGateway({ GATEWAY_INTERN_DAEMON_TIMEOUT_MS: "300" });
});
mute.after(async ({ env }) => {
  await env?.stop();
});

mute("a host that does not answer: 408 timeout after the daemon timeout", async ({ env }) => {
  const intern = await runningIntern(env, "mute");
  env.hosts.silence(intern.id as string);
  const res = await daemon(env, intern.id as string);
  assert.is(res.status, 408, res.text);
  assert.equal(errorOf(res.body), { code: 408, reason: "timeout", retryable: true });
  assert.not.ok(res.text.includes(env.hosts.hosts.get(intern.id as string)!.access.token));
  assert.is((await reveals(env, intern.id as string)).length, 0);
});

mute.run();

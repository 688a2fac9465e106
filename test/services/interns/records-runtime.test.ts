import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { at, call } from "../../support/http.js";
import { runningInternId, startRuntimeGateway, type RuntimeEnv } from "../../support/intern-runtime.js";
import { waitForInternAt } from "../../support/interns.js";

/**
 * The records lifecycle against the real intern runtime (host processes of host-manager.ts): the
 * other records suites steer a test InternHosts to reach every failure; this one checks that the
 * same transitions drive real hosts.
 */
const test = suite<{ env: RuntimeEnv }>("intern records on the real runtime");
test.before(async (ctx) => {
  ctx.env = await startRuntimeGateway();
});
test.after(async ({ env }) => {
  await env.stop();
});

const path = (id: string, rest = "") => `/api/v1/interns/${id}${rest}`;

test("provision → running host with its own key → daemon → suspend → delete", async ({ env }) => {
  const id = await runningInternId(env, "real-runtime");
  const intern = await call(env.gw.url, "GET", path(id), { key: env.key });
  assert.is(at(intern.body, "data", "progress"), null);
  assert.type(at(intern.body, "data", "hostname"), "string");

  const daemon = await call(env.gw.url, "GET", path(id, "/daemon"), { key: env.key });
  assert.is(daemon.status, 200, daemon.text);
  assert.is(daemon.headers.get("cache-control"), "no-store");
  const { origin, token } = daemon.body as { origin: string; token: string };
  assert.is(at(intern.body, "data", "hostname"), new URL(origin).host);
  const health = await fetch(`${origin}/health`, { headers: { authorization: `Bearer ${token}` } });
  assert.is(health.status, 200, "the revealed origin and token reach the real host");
  const [reveal] = await env.gw.gateway.sequelize.query<{ caller_key_hash: string }>(
    "SELECT caller_key_hash FROM intern_daemon_reveals WHERE intern_id = :id",
    {
      type: QueryTypes.SELECT,
      replacements: { id },
    },
  );
  assert.is(reveal?.caller_key_hash, hashKey(env.key));

  const suspended = await call(env.gw.url, "POST", path(id, "/suspend"), { key: env.key });
  assert.is(suspended.status, 200, suspended.text);
  assert.is(at(suspended.body, "data", "status"), "stopped");
  assert.is(env.hosts.pid(id), undefined, "the host process is gone");
  const afterStop = await fetch(`${origin}/health`, { headers: { authorization: `Bearer ${token}` } }).then(
    (res) => res.status,
    () => "refused",
  );
  assert.is(afterStop, "refused");
  assert.is((await call(env.gw.url, "GET", path(id, "/daemon"), { key: env.key })).status, 409);

  assert.is((await call(env.gw.url, "DELETE", path(id), { key: env.key })).status, 200);
  await waitForInternAt(env.gw.url, env.key, id, "gone");
  assert.is((await call(env.gw.url, "GET", path(id), { key: env.key })).status, 404, "the record is gone");
});

test.run();

import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { at, call } from "../../support/http.js";
import { BOOT_FAILURE, BOOT_STEPS } from "../../support/interns-hosts.js";
import { createdIntern, hasStatus, runningIntern, waitForIntern, type InternsEnv } from "../../support/interns.js";
import { path, recordsSuite } from "./records-fixture.js";

/** An intern's life: provision, suspend, a failed boot, delete, and the key it holds at each step. */
const test = recordsSuite("intern records: lifecycle");

async function keyRows(env: InternsEnv, internId: string): Promise<Array<{ hash: string; label: string }>> {
  return env.gw.gateway.sequelize.query("SELECT hash, label FROM api_keys WHERE intern_id = :internId", {
    type: QueryTypes.SELECT,
    replacements: { internId },
  });
}

const currentKey = (env: InternsEnv, key: string) => call(env.gw.url, "GET", "/api/v1/key", { key });

test("provision: provisioning with progress steps, then running; the intern's key is stored hashed", async ({
  env,
}) => {
  const intern = await createdIntern(env, { name: "booting" });
  const id = intern.id as string;
  const release = env.hosts.hold("booting");
  const res = await call(env.gw.url, "POST", path(id, "/provision"), { key: env.main.key });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "status"), "provisioning");

  const booting = await waitForIntern(env, id, (i) => at(i, "progress", "step_number") === 1);
  assert.equal(at(booting, "progress"), { step_label: BOOT_STEPS[0], step_number: 1, total_steps: BOOT_STEPS.length });
  assert.is(at(booting, "status"), "provisioning");
  const twice = await call(env.gw.url, "POST", path(id, "/provision"), { key: env.main.key });
  assert.is(twice.status, 409, "an intern already provisioning cannot be provisioned");

  release();
  const running = (await waitForIntern(env, id, hasStatus("running")))!;
  assert.is(running.progress, null, "progress is null once provisioning has settled");
  assert.is(running.hostname, new URL(env.hosts.hosts.get(id)!.access.origin).host);
  assert.is(running.last_failure_message, null);

  const apiKey = env.hosts.apiKeys.get(id)!;
  const keys = await keyRows(env, id);
  assert.is(keys.length, 1);
  assert.is(keys[0]!.hash, hashKey(apiKey), "only the hash is stored");
  assert.not.ok(keys[0]!.label.includes(apiKey.slice(12, -3)), "the label is masked");
  assert.is((await currentKey(env, apiKey)).status, 200, "the intern's key works");

  const again = await call(env.gw.url, "POST", path(id, "/provision"), { key: env.main.key });
  assert.is(again.status, 409, "a running intern cannot be provisioned");
});

test("suspend stops the host and revokes the key; provisioning again issues a new key", async ({ env }) => {
  const intern = await runningIntern(env, "sleepy");
  const id = intern.id as string;
  const firstKey = env.hosts.apiKeys.get(id)!;
  const origin = env.hosts.hosts.get(id)!.access.origin;

  const res = await call(env.gw.url, "POST", path(id, "/suspend"), { key: env.main.key });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "status"), "stopped");
  assert.is(at(res.body, "data", "hostname"), null);
  assert.ok(env.hosts.stops.includes(id));
  const gone = await fetch(`${origin}/health`).then(
    () => "answered",
    () => "refused",
  );
  assert.is(gone, "refused", "the host no longer listens");
  assert.is((await currentKey(env, firstKey)).status, 401, "a stopped intern's key is revoked");

  const twice = await call(env.gw.url, "POST", path(id, "/suspend"), { key: env.main.key });
  assert.is(twice.status, 409, "a stopped intern cannot be suspended");

  assert.is((await call(env.gw.url, "POST", path(id, "/provision"), { key: env.main.key })).status, 200);
  await waitForIntern(env, id, hasStatus("running"));
  const secondKey = env.hosts.apiKeys.get(id)!;
  assert.is.not(secondKey, firstKey);
  assert.is((await currentKey(env, secondKey)).status, 200);
  assert.is((await keyRows(env, id)).length, 1, "one key per intern at a time");
});

test("suspend during provisioning cancels the boot; a queued intern cannot be suspended", async ({ env }) => {
  const queued = await createdIntern(env, { name: "idle" });
  const res = await call(env.gw.url, "POST", path(queued.id as string, "/suspend"), { key: env.main.key });
  assert.is(res.status, 409, res.text);
  assert.match(at(res.body, "error", "message") as string, /queued/);

  const release = env.hosts.hold("interrupted");
  const intern = await createdIntern(env, { name: "interrupted", provision: true });
  assert.is(intern.status, "provisioning", "provision: true starts provisioning during the create");
  const id = intern.id as string;
  await waitForIntern(env, id, (i) => at(i, "progress") !== null);
  const suspended = await call(env.gw.url, "POST", path(id, "/suspend"), { key: env.main.key });
  assert.is(suspended.status, 200, suspended.text);
  assert.is(at(suspended.body, "data", "status"), "stopped");
  release();
  const after = await call(env.gw.url, "GET", path(id), { key: env.main.key });
  assert.is(at(after.body, "data", "status"), "stopped", "the cancelled boot does not mark it running");
  assert.is((await keyRows(env, id)).length, 0);
});

test("a failed boot: failed with last_failure_message, key revoked; provisioning again works", async ({ env }) => {
  env.hosts.failBoot.add("doomed");
  const intern = await createdIntern(env, { name: "doomed", provision: true });
  const id = intern.id as string;
  const failed = (await waitForIntern(env, id, hasStatus("failed")))!;
  assert.match(failed.last_failure_message as string, BOOT_FAILURE);
  assert.is(failed.progress, null);
  assert.is(failed.hostname, null);
  assert.is((await keyRows(env, id)).length, 0, "a failed intern holds no key");
  assert.is((await currentKey(env, env.hosts.apiKeys.get(id)!)).status, 401);

  env.hosts.failBoot.delete("doomed");
  const retry = await call(env.gw.url, "POST", path(id, "/provision"), { key: env.main.key });
  assert.is(retry.status, 200, retry.text);
  assert.is(at(retry.body, "data", "last_failure_message"), null, "a new attempt clears the last failure");
  await waitForIntern(env, id, hasStatus("running"));
});

test("provisioning an intern whose creator left the organization: 403", async ({ env }) => {
  const member = await call(env.gw.url, "POST", "/api/v1/organization/members", {
    key: env.main.key,
    body: { email: "leaver@example.com" },
  });
  assert.is(member.status, 201, member.text);
  const userId = at(member.body, "data", "id") as string;
  const minted = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.main.key,
    body: { name: "leaver's key", creator_user_id: userId },
  });
  assert.is(minted.status, 201, minted.text);
  const intern = await createdIntern(
    env,
    { name: "orphan" },
    { workspaceId: env.main.workspaceId, key: at(minted.body, "key") as string },
  );
  assert.is(
    (await call(env.gw.url, "DELETE", `/api/v1/organization/members/${userId}`, { key: env.main.key })).status,
    200,
  );
  const res = await call(env.gw.url, "POST", path(intern.id as string, "/provision"), { key: env.main.key });
  assert.is(res.status, 403, res.text);
  assert.is(
    at(await call(env.gw.url, "GET", path(intern.id as string), { key: env.main.key }), "body", "data", "status"),
    "queued",
    "nothing changed",
  );
});

test("delete: destroying, host stopped, key revoked, record, vault and secrets gone", async ({ env }) => {
  const intern = await runningIntern(env, "short-lived");
  const id = intern.id as string;
  const apiKey = env.hosts.apiKeys.get(id)!;
  const stored = await call(env.gw.url, "PUT", `/api/v1/vault/interns/${id}/secrets/token`, {
    key: env.main.key,
    body: { hosts: ["api.example.com"], value: "s3cr3t" },
  });
  assert.is(stored.status, 200, stored.text);

  const res = await call(env.gw.url, "DELETE", path(id), { key: env.main.key });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { deleting: true });
  assert.is((await currentKey(env, apiKey)).status, 401, "the key is revoked at once");
  await waitForIntern(env, id, "gone");
  assert.ok(env.hosts.stops.includes(id));
  assert.not.ok(env.hosts.hosts.has(id));
  const [left] = await env.gw.gateway.sequelize.query<{ vaults: string; secrets: string }>(
    "SELECT (SELECT count(*) FROM vaults WHERE id = :vaultId) AS vaults, " +
      "(SELECT count(*) FROM vault_secrets WHERE vault_id = :vaultId) AS secrets",
    { type: QueryTypes.SELECT, replacements: { vaultId: intern.vault_id } },
  );
  assert.equal(left, { vaults: "0", secrets: "0" });
  assert.is((await call(env.gw.url, "DELETE", path(id), { key: env.main.key })).status, 404);
});

test("delete: a host that cannot be stopped gives destroy_failed; deleting again retries", async ({ env }) => {
  const intern = await runningIntern(env, "stubborn");
  const id = intern.id as string;
  env.hosts.failStop.add(id);
  assert.is((await call(env.gw.url, "DELETE", path(id), { key: env.main.key })).status, 200);
  const failed = (await waitForIntern(env, id, hasStatus("destroy_failed")))!;
  assert.match(failed.last_failure_message as string, /did not stop/);
  assert.is(
    (await call(env.gw.url, "PATCH", path(id), { key: env.main.key, body: { description: "x" } })).status,
    409,
    "no update while deleting",
  );
  assert.is(
    (await call(env.gw.url, "POST", path(id, "/provision"), { key: env.main.key })).status,
    409,
    "no provisioning while deleting",
  );
  assert.is((await call(env.gw.url, "POST", path(id, "/suspend"), { key: env.main.key })).status, 409);

  env.hosts.failStop.delete(id);
  assert.is(
    (await call(env.gw.url, "DELETE", path(id), { key: env.main.key, body: { acknowledge_workspace_loss: true } }))
      .status,
    200,
  );
  await waitForIntern(env, id, "gone");
});

test.run();

import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { at, call, rawRequest } from "../../support/http.js";
import { BOOT_FAILURE, BOOT_STEPS } from "../../support/interns-hosts.js";
import {
  CATALOG_MODEL,
  REGIONAL_HOST,
  createIntern,
  createdIntern,
  hasStatus,
  runningIntern,
  startInternsGateway,
  waitForIntern,
  type InternsEnv,
  type Json,
} from "../../support/interns.js";
import { ISO, UUID } from "../../support/shapes.js";

const test = suite<{ env: InternsEnv }>("intern records");
test.before(async (ctx) => {
  ctx.env = await startInternsGateway();
});
test.after(async ({ env }) => {
  await env.stop();
});

const INTERN_FIELDS = [
  "attached_vault_id",
  "created_at",
  "description",
  "hostname",
  "id",
  "instructions",
  "last_failure_message",
  "model",
  "name",
  "progress",
  "status",
  "updated_at",
  "vault_id",
  "workspace_id",
];
const UNKNOWN_ID = "0b7f3c9e-2d41-4f6a-9e8b-5c1d2a3f4e60";
const path = (id: string, rest = "") => `/api/v1/interns/${id}${rest}`;

async function keyRows(env: InternsEnv, internId: string): Promise<Array<{ hash: string; label: string }>> {
  return env.gw.gateway.sequelize.query("SELECT hash, label FROM api_keys WHERE intern_id = :internId", {
    type: QueryTypes.SELECT,
    replacements: { internId },
  });
}

const currentKey = (env: InternsEnv, key: string) => call(env.gw.url, "GET", "/api/v1/key", { key });

test("create answers 201 with the public intern object in `data`; queued until provisioned", async ({ env }) => {
  const res = await createIntern(env, {
    name: "research-assistant",
    description: "Researches customer questions",
    instructions: "Be brief.",
    model: CATALOG_MODEL,
  });
  assert.is(res.status, 201, res.text);
  assert.equal(Object.keys(res.body as Json), ["data"], "the record is wrapped in data (docs/response-envelopes.md)");
  const intern = at(res.body, "data") as Json;
  assert.equal(Object.keys(intern).sort(), INTERN_FIELDS);
  assert.match(intern.id as string, UUID);
  assert.is(intern.name, "research-assistant");
  assert.is(intern.description, "Researches customer questions");
  assert.is(intern.instructions, "Be brief.");
  assert.is(intern.model, CATALOG_MODEL);
  assert.is(intern.status, "queued");
  assert.is(intern.workspace_id, env.main.workspaceId);
  assert.match(intern.vault_id as string, UUID, "the private vault is created with the intern");
  for (const field of ["hostname", "attached_vault_id", "last_failure_message", "progress"])
    assert.is(intern[field], null, field);
  assert.match(intern.created_at as string, ISO);
  assert.match(intern.updated_at as string, ISO);
  assert.equal(env.hosts.starts.includes(intern.id as string), false, "no host starts before provisioning");

  const bare = await createdIntern(env, { name: "bare" });
  for (const field of ["description", "instructions", "model"])
    assert.is(bare[field], null, `${field}: null when omitted`);

  const got = await call(env.gw.url, "GET", path(intern.id as string), { key: env.main.key });
  assert.is(got.status, 200, got.text);
  assert.equal(got.body, { data: intern });
});

test("create: bad input is a 4xx naming the problem", async ({ env }) => {
  const cases: Array<[Json, number, RegExp]> = [
    [{ name: "" }, 400, /name/],
    [{ name: "x".repeat(101) }, 400, /name/],
    [{ name: "no-workspace", workspace_id: undefined }, 400, /workspace_id/],
    [{ name: "bad-workspace", workspace_id: "nope" }, 400, /workspace_id/],
    [{ name: "bad-model", model: "gpt4" }, 400, /model/],
    [{ name: "unknown-model", model: "openai/not-offered" }, 400, /not offered/],
    [{ name: "bad-vault", vault_id: "nope" }, 400, /vault_id/],
    [{ name: "unknown-vault", vault_id: UNKNOWN_ID }, 404, /vault_id/],
    [{ name: "typed", provision: "yes" }, 400, /provision/],
  ];
  for (const [body, status, message] of cases) {
    const res = await createIntern(env, body);
    assert.is(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
    assert.match(at(res.body, "error", "message") as string, message, JSON.stringify(body));
  }
  const missing = await call(env.gw.url, "POST", "/api/v1/interns", {
    key: env.main.key,
    body: { name: "no-workspace" },
  });
  assert.is(missing.status, 400, "workspace_id is required: no default-workspace fallback");
  const elsewhere = await createIntern(env, { name: "elsewhere", workspace_id: env.second.workspaceId });
  assert.is(elsewhere.status, 404, "another workspace than the key's is not found");
  assert.is(at(elsewhere.body, "error", "metadata", "reason"), "not_found");
});

test("names are unique per creator within a workspace: 409", async ({ env }) => {
  await createdIntern(env, { name: "twin" });
  const again = await createIntern(env, { name: "twin" });
  assert.is(again.status, 409, again.text);
  assert.is(
    (await createIntern(env, { name: "twin" }, env.second)).status,
    201,
    "another workspace may reuse the name",
  );
});

test("vault_id attaches another intern's vault of the workspace as attached_vault_id", async ({ env }) => {
  const owner = await createdIntern(env, { name: "vault-owner" });
  const borrower = await createdIntern(env, { name: "borrower", vault_id: owner.vault_id });
  assert.is(borrower.attached_vault_id, owner.vault_id);
  assert.is.not(borrower.vault_id, owner.vault_id, "it still owns a vault of its own");
  const foreign = await createdIntern(env, { name: "foreign-owner" }, env.second);
  const refused = await createIntern(env, { name: "borrows-foreign", vault_id: foreign.vault_id });
  assert.is(refused.status, 404, "a vault of another workspace cannot be attached");
});

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
    "SELECT (SELECT count(*) FROM vaults WHERE id = :vaultId) AS vaults, (SELECT count(*) FROM vault_secrets WHERE vault_id = :vaultId) AS secrets",
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

test("update changes only the fields sent; null clears; bad values are 4xx", async ({ env }) => {
  const intern = await createdIntern(env, {
    name: "editable",
    description: "before",
    instructions: "old",
    model: CATALOG_MODEL,
  });
  const id = intern.id as string;
  const res = await call(env.gw.url, "PATCH", path(id), { key: env.main.key, body: { description: "after" } });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "description"), "after");
  assert.is(at(res.body, "data", "instructions"), "old", "unsent fields stay");
  assert.is(at(res.body, "data", "model"), CATALOG_MODEL);
  assert.ok((at(res.body, "data", "updated_at") as string) >= (intern.updated_at as string));

  const cleared = await call(env.gw.url, "PATCH", path(id), {
    key: env.main.key,
    body: { instructions: null, model: null, name: "renamed" },
  });
  assert.is(cleared.status, 200, cleared.text);
  assert.is(at(cleared.body, "data", "instructions"), null);
  assert.is(at(cleared.body, "data", "model"), null, "null restores the workspace default");
  assert.is(at(cleared.body, "data", "name"), "renamed");

  await createdIntern(env, { name: "taken" });
  const cases: Array<[Json, number]> = [
    [{ name: null }, 400],
    [{ name: "" }, 400],
    [{ model: "openai/not-offered" }, 400],
    [{ description: "x".repeat(1001) }, 400],
    [{ name: "taken" }, 409],
  ];
  for (const [body, status] of cases) {
    const bad = await call(env.gw.url, "PATCH", path(id), { key: env.main.key, body });
    assert.is(bad.status, status, `${JSON.stringify(body)}: ${bad.text}`);
  }
});

test("list: newest first, cursor pages, status filter comma-separated or repeated", async ({ env }) => {
  const list = async (query: string, key = env.second.key) =>
    call(env.gw.url, "GET", `/api/v1/interns${query}`, { key });
  const ids: string[] = [];
  for (const name of ["l1", "l2", "l3"]) ids.push((await createdIntern(env, { name }, env.second)).id as string);
  const running = await runningIntern(env, "l4", env.second);
  ids.push(running.id as string);
  const all = await list("");
  assert.is(all.status, 200, all.text);
  const seen = (at(all.body, "data") as Json[]).map((i) => i.id as string);
  assert.equal(seen.slice(0, 4), [...ids].reverse(), "newest first");
  assert.is(at(all.body, "has_more"), false);
  assert.is(at(all.body, "next_cursor"), undefined, "no cursor on the last page");

  const first = await list("?limit=2");
  assert.is(at(first.body, "has_more"), true);
  const cursor = at(first.body, "next_cursor") as string;
  const second = await list(`?limit=2&starting_after=${encodeURIComponent(cursor)}`);
  const paged = [...(at(first.body, "data") as Json[]), ...(at(second.body, "data") as Json[])].map((i) => i.id);
  assert.equal(paged, seen.slice(0, 4), "pages continue where the previous ended");

  const onlyRunning = await list("?status=running");
  assert.equal(
    (at(onlyRunning.body, "data") as Json[]).map((i) => i.id),
    [running.id],
  );
  const comma = await list("?status=running,queued");
  const repeated = await list("?status=running&status=queued");
  assert.equal(at(comma.body, "data"), at(repeated.body, "data"));
  assert.ok((at(comma.body, "data") as Json[]).length >= 4);

  assert.is((await list(`?workspace_id=${env.second.workspaceId}`)).status, 200);
  const cases: Array<[string, number]> = [
    ["?limit=0", 400],
    ["?limit=501", 400],
    ["?status=sleeping", 400],
    ["?status=running,", 400],
    ["?starting_after=garbage", 400],
    [`?starting_after=${Buffer.from(JSON.stringify(["yesterday", "x"])).toString("base64url")}`, 400],
    ["?workspace_id=nope", 400],
    [`?workspace_id=${env.main.workspaceId}`, 404],
  ];
  for (const [query, status] of cases) assert.is((await list(query)).status, status, query);
});

test("list: a starting_after other than a next_cursor is a 400 naming it, never a 500", async ({ env }) => {
  const cursor = (key: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(key)).toString("base64url"));
  const issued = "2024-03-05T12:00:00.000Z";
  const crafted: unknown[] = [
    // Date.parse takes these, Postgres does not.
    ["1", UNKNOWN_ID],
    ["foo 2020", UNKNOWN_ID],
    ["Tue Mar 05 2024", UNKNOWN_ID],
    ["0000-01-01T00:00:00.000Z", UNKNOWN_ID],
    ["+010000-01-01T00:00:00.000Z", UNKNOWN_ID],
    ["2024-02-30T00:00:00.000Z", UNKNOWN_ID],
    [issued, "not-a-uuid"],
    [issued, UNKNOWN_ID, "extra"],
    [issued, 7],
    { created_at: issued, id: UNKNOWN_ID },
  ];
  for (const key of crafted) {
    const res = await call(env.gw.url, "GET", `/api/v1/interns?starting_after=${cursor(key)}`, { key: env.main.key });
    assert.is(res.status, 400, `${JSON.stringify(key)}: ${res.text}`);
    assert.is(
      at(res.body, "error", "message"),
      "starting_after is not a cursor this list gave out; pass the previous page's next_cursor unchanged",
    );
  }
  const wellFormed = await call(env.gw.url, "GET", `/api/v1/interns?starting_after=${cursor([issued, UNKNOWN_ID])}`, {
    key: env.main.key,
  });
  assert.is(wellFormed.status, 200, wellFormed.text);
});

test("another workspace's interns are 404 on every route and absent from lists", async ({ env }) => {
  const intern = await createdIntern(env, { name: "private" });
  const id = intern.id as string;
  const key = env.second.key;
  const routes: Array<[string, string, Json?]> = [
    ["GET", path(id)],
    ["PATCH", path(id), { description: "x" }],
    ["DELETE", path(id)],
    ["POST", path(id, "/provision")],
    ["POST", path(id, "/suspend")],
    ["GET", path(id, "/daemon")],
    ["GET", path(UNKNOWN_ID)],
    ["GET", path("not-a-uuid")],
  ];
  for (const [method, route, body] of routes) {
    const res = await call(env.gw.url, method, route, { key, ...(body ? { body } : {}) });
    assert.is(res.status, 404, `${method} ${route}: ${res.text}`);
    assert.is(at(res.body, "error", "metadata", "reason"), "not_found", `${method} ${route}`);
  }
  const listed = await call(env.gw.url, "GET", "/api/v1/interns", { key });
  assert.not.ok((at(listed.body, "data") as Json[]).some((i) => i.id === id));
  assert.is(
    (await call(env.gw.url, "GET", path(id), { key: env.main.key })).status,
    200,
    "its own workspace still sees it",
  );
});

test("outside the interns programme every intern route answers 404", async ({ env }) => {
  const intern = await createdIntern(env, { name: "visible-only-inside" });
  const key = env.outsider.key;
  const routes: Array<[string, string, Json?]> = [
    ["GET", "/api/v1/interns"],
    ["POST", "/api/v1/interns", { name: "x", workspace_id: env.outsider.workspaceId }],
    ["GET", path(intern.id as string)],
    ["POST", path(intern.id as string, "/provision")],
    ["GET", path(intern.id as string, "/daemon")],
  ];
  for (const [method, route, body] of routes) {
    const res = await call(env.gw.url, method, route, { key, ...(body ? { body } : {}) });
    assert.is(res.status, 404, `${method} ${route}: ${res.text}`);
    assert.is(at(res.body, "error", "metadata", "reason"), "not_found");
  }
  assert.is((await call(env.gw.url, "GET", "/api/v1/interns")).status, 401, "no key is still a 401");
});

test("requests on a regional hostname are refused with 403", async ({ env }) => {
  const intern = await createdIntern(env, { name: "global-only" });
  const regional = { host: `${REGIONAL_HOST}:443` };
  for (const route of ["/api/v1/interns", path(intern.id as string), "/api/v1/vault/secrets"]) {
    const res = await rawRequest(env.gw.url, "GET", route, { key: env.main.key, headers: regional });
    assert.is(res.status, 403, `${route}: ${JSON.stringify(res.body)}`);
    assert.match(at(res.body, "error", "message") as string, /global hostname/);
  }
  const outsider = await rawRequest(env.gw.url, "GET", "/api/v1/interns", { key: env.outsider.key, headers: regional });
  assert.is(outsider.status, 404, "outside the programme the route does not exist, whatever the host");
  const global = await rawRequest(env.gw.url, "GET", "/api/v1/interns", {
    key: env.main.key,
    headers: { host: "gateway.test" },
  });
  assert.is(global.status, 200);
});

test("an intern's own key is confined to that intern", async ({ env }) => {
  const intern = await runningIntern(env, "confined");
  const other = await createdIntern(env, { name: "neighbour" });
  const id = intern.id as string;
  const own = env.hosts.apiKeys.get(id)!;
  const get = await call(env.gw.url, "GET", path(id), { key: own });
  assert.is(get.status, 200, get.text);
  const listed = await call(env.gw.url, "GET", "/api/v1/interns", { key: own });
  assert.equal(
    (at(listed.body, "data") as Json[]).map((i) => i.id),
    [id],
    "it lists only its intern",
  );
  assert.is((await call(env.gw.url, "GET", path(id, "/daemon"), { key: own })).status, 200, "its own daemon");

  const notFound: Array<[string, string, Json?]> = [
    ["GET", path(other.id as string)],
    ["GET", path(other.id as string, "/daemon")],
    ["POST", path(other.id as string, "/provision")],
    ["POST", "/api/v1/interns", { name: "spawned", workspace_id: env.main.workspaceId }],
    ["GET", "/api/v1/vault/secrets"],
    ["PUT", "/api/v1/vault/secrets/token", { hosts: ["api.example.com"], value: "v" }],
    ["GET", `/api/v1/vault/interns/${other.id as string}/secrets`],
    ["POST", `/api/v1/vault/interns/${id}/secrets/copy`, { names: ["token"] }],
  ];
  for (const [method, route, body] of notFound) {
    const res = await call(env.gw.url, method, route, { key: own, ...(body ? { body } : {}) });
    assert.is(res.status, 404, `${method} ${route}: ${res.text}`);
  }
  for (const [method, route, body] of [
    ["PATCH", path(id), { description: "self-edit" }],
    ["POST", path(id, "/suspend")],
    ["DELETE", path(id)],
  ] as Array<[string, string, Json?]>) {
    const res = await call(env.gw.url, method, route, { key: own, ...(body ? { body } : {}) });
    assert.is(res.status, 403, `${method} ${route}: ${res.text}`);
  }
  const put = await call(env.gw.url, "PUT", `/api/v1/vault/interns/${id}/secrets/own_token`, {
    key: own,
    body: { hosts: ["api.example.com"], value: "v" },
  });
  assert.is(put.status, 200, `its own secrets: ${put.text}`);
  assert.is((await call(env.gw.url, "GET", `/api/v1/vault/interns/${id}/effective-secrets`, { key: own })).status, 200);
});

test.run();

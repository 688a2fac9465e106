import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { open } from "../../../server/platform/secrets/secret-box.js";
import { ByokCredentialRow } from "../../../server/platform/db/governance-models.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID } from "../../support/shapes.js";

interface Org {
  key: string;
  workspaceId: string;
}

const test = suite<{ gw: TestGateway; org: Org; other: Org }>("byok");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.org = await seedOrganization("byok-main");
  ctx.other = await seedOrganization("byok-other");
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const FIELDS = ["id", "provider", "name", "label", "workspace_id", "disabled", "created_at"];

let counter = 0;
/** A fresh provider key each time, so "absent from the response" proves something. */
const providerKey = (prefix = "sk-test") =>
  `${prefix}-${Date.now().toString(36)}${(++counter).toString().padStart(4, "0")}abcdefghijklmnop`;

const createByok = (gw: TestGateway, key: string, body: Record<string, unknown>) =>
  call(gw.url, "POST", "/api/v1/byok", { key, body });

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

async function newWorkspace(gw: TestGateway, key: string, slug: string): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key, body: { name: slug, slug } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

test("POST /byok: 201 with the credential's fields, a masked label and never the key", async ({ gw, org }) => {
  const secret = providerKey();
  const res = await createByok(gw, org.key, { provider: "openai", key: secret, name: "Production OpenAI" });
  assert.is(res.status, 201, res.text);
  const data = at(res.body, "data") as Record<string, unknown>;
  assert.equal(Object.keys(data).sort(), [...FIELDS].sort());
  assert.match(String(data.id), UUID);
  assert.is(data.provider, "openai");
  assert.is(data.name, "Production OpenAI");
  assert.is(data.label, `${secret.slice(0, 4)}...${secret.slice(-4)}`);
  assert.is(data.workspace_id, org.workspaceId, "defaults to the caller key's workspace");
  assert.is(data.disabled, false);
  assert.match(String(data.created_at), ISO);
  assert.not.ok(res.text.includes(secret), "the raw key never appears in a response");
});

test("POST /byok: name null when omitted, disabled and another workspace of the organization", async ({ gw, org }) => {
  const workspaceId = await newWorkspace(gw, org.key, "byok-second");
  const secret = providerKey();
  const res = await createByok(gw, org.key, {
    provider: "anthropic",
    key: secret,
    workspace_id: workspaceId,
    disabled: true,
  });
  assert.is(res.status, 201, res.text);
  assert.is(at(res.body, "data", "name"), null);
  assert.is(at(res.body, "data", "disabled"), true);
  assert.is(at(res.body, "data", "workspace_id"), workspaceId);
  assert.not.ok(res.text.includes(secret));
});

test("short keys show less of themselves in the label", async ({ gw, org }) => {
  for (const [secret, label] of [
    ["abcdefgh", "ab...gh"],
    ["abcdefghijkl", "abc...jkl"],
    ["abc", "..."],
  ] as const) {
    const res = await createByok(gw, org.key, { provider: "groq", key: secret });
    assert.is(res.status, 201, res.text);
    assert.is(at(res.body, "data", "label"), label, secret);
  }
});

test("the key is stored sealed: not in plaintext, and it opens only with the master key bound to the row id", async ({
  gw,
  org,
}) => {
  const secret = providerKey("sk-sealed");
  const res = await createByok(gw, org.key, { provider: "openai", key: secret });
  assert.is(res.status, 201, res.text);
  const id = at(res.body, "data", "id") as string;
  const row = await ByokCredentialRow.findByPk(id);
  assert.ok(row, "row stored");
  assert.ok(Buffer.isBuffer(row.sealedKey));
  assert.not.ok(row.sealedKey.includes(Buffer.from(secret, "utf8")), "no plaintext in the sealed column");
  assert.not.ok(row.label.includes(secret));
  assert.is(open(gw.gateway.deps.secrets.masterKey, row.sealedKey, id), secret);
  assert.throws(() => open(gw.gateway.deps.secrets.masterKey, row.sealedKey, "another-row"), "bound to its row id");
});

test("GET /byok: the caller's workspace by default, newest first, total_count, provider filter and paging", async ({
  gw,
}) => {
  const org = await seedOrganization("byok-list");
  const secrets: string[] = [];
  for (const provider of ["openai", "mistral", "openai", "together"]) {
    const secret = providerKey();
    secrets.push(secret);
    const res = await createByok(gw, org.key, { provider, key: secret, name: provider });
    assert.is(res.status, 201, res.text);
  }
  const all = await call(gw.url, "GET", "/api/v1/byok", { key: org.key });
  assert.is(all.status, 200, all.text);
  assert.is(at(all.body, "total_count"), 4);
  const data = at(all.body, "data") as Array<Record<string, unknown>>;
  assert.equal(
    data.map((d) => d.provider),
    ["together", "openai", "mistral", "openai"],
    "newest first",
  );
  for (const item of data) assert.equal(Object.keys(item).sort(), [...FIELDS].sort());
  for (const secret of secrets) assert.not.ok(all.text.includes(secret));

  const openai = await call(gw.url, "GET", "/api/v1/byok?provider=openai", { key: org.key });
  assert.is(at(openai.body, "total_count"), 2);
  assert.equal(
    (at(openai.body, "data") as Array<Record<string, unknown>>).map((d) => d.provider),
    ["openai", "openai"],
  );

  const page = await call(gw.url, "GET", "/api/v1/byok?offset=1&limit=2", { key: org.key });
  assert.is(at(page.body, "total_count"), 4, "total_count counts every match, not the page");
  assert.equal(
    (at(page.body, "data") as Array<Record<string, unknown>>).map((d) => d.id),
    data.slice(1, 3).map((d) => d.id),
  );

  const workspaceId = await newWorkspace(gw, org.key, "byok-empty");
  const empty = await call(gw.url, "GET", `/api/v1/byok?workspace_id=${workspaceId}`, { key: org.key });
  assert.is(empty.status, 200, empty.text);
  assert.equal(at(empty.body, "data"), []);
  assert.is(at(empty.body, "total_count"), 0);
});

test("GET and DELETE /byok/{id}: the record, then {deleted: true}, then 404", async ({ gw, org }) => {
  const secret = providerKey();
  const created = await createByok(gw, org.key, { provider: "fireworks", key: secret, name: "fw" });
  const id = at(created.body, "data", "id") as string;
  const got = await call(gw.url, "GET", `/api/v1/byok/${id}`, { key: org.key });
  assert.is(got.status, 200, got.text);
  assert.equal(at(got.body, "data"), at(created.body, "data"));
  assert.not.ok(got.text.includes(secret));
  const deleted = await call(gw.url, "DELETE", `/api/v1/byok/${id}`, { key: org.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(deleted.body, { deleted: true });
  assert.is(await ByokCredentialRow.findByPk(id), null, "the sealed key is gone with the row");
  assertError(await call(gw.url, "GET", `/api/v1/byok/${id}`, { key: org.key }), 404);
  assertError(await call(gw.url, "DELETE", `/api/v1/byok/${id}`, { key: org.key }), 404);
});

test("another organization's credential or workspace is a 404", async ({ gw, org, other }) => {
  const created = await createByok(gw, org.key, { provider: "openai", key: providerKey() });
  const id = at(created.body, "data", "id") as string;
  assertError(await call(gw.url, "GET", `/api/v1/byok/${id}`, { key: other.key }), 404, undefined, "get");
  assertError(await call(gw.url, "DELETE", `/api/v1/byok/${id}`, { key: other.key }), 404, undefined, "delete");
  assert.is((await call(gw.url, "GET", `/api/v1/byok/${id}`, { key: org.key })).status, 200, "still there");
  assertError(
    await call(gw.url, "GET", `/api/v1/byok?workspace_id=${org.workspaceId}`, { key: other.key }),
    404,
    undefined,
    "list",
  );
  assertError(
    await createByok(gw, other.key, { provider: "openai", key: providerKey(), workspace_id: org.workspaceId }),
    404,
    undefined,
    "create",
  );
  assertError(
    await call(gw.url, "GET", "/api/v1/byok/3f1c2a4e-8b7d-4c6e-9a51-0d2e7f3b6c18", { key: org.key }),
    404,
    undefined,
    "unknown",
  );
});

test("bad input: 400 naming the field, and an unknown provider names the accepted ones", async ({ gw, org }) => {
  const unknown = await createByok(gw, org.key, { provider: "acme", key: providerKey() });
  assertError(
    unknown,
    400,
    /provider must be one of: openai, anthropic, azure, google-ai-studio, amazon-bedrock, together, fireworks, deepinfra, groq, mistral/,
  );
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ key: providerKey() }, /provider/],
    [{ provider: "OpenAI", key: providerKey() }, /provider/],
    [{ provider: "openai" }, /key/],
    [{ provider: "openai", key: "" }, /key/],
    [{ provider: "openai", key: "sk has spaces" }, /key/],
    [{ provider: "openai", key: "sk-line\nbreak" }, /key/],
    [{ provider: "openai", key: providerKey(), name: "" }, /name/],
    [{ provider: "openai", key: providerKey(), workspace_id: "not-a-uuid" }, /workspace_id/],
    [{ provider: "openai", key: providerKey(), disabled: "yes" }, /disabled/],
  ];
  for (const [body, message] of cases) {
    const res = await createByok(gw, org.key, body);
    assertError(res, 400, message, JSON.stringify(body));
    if (typeof body.key === "string" && body.key.length > 3)
      assert.not.ok(res.text.includes(body.key), "a rejected key is not echoed either");
  }
  assertError(await call(gw.url, "GET", "/api/v1/byok?limit=0", { key: org.key }), 400, /limit/);
  assertError(await call(gw.url, "GET", "/api/v1/byok/nope", { key: org.key }), 400, /id/);
});

test("only management keys: another key gets 403, no key 401", async ({ gw, org }) => {
  const minted = await call(gw.url, "POST", "/api/v1/keys", { key: org.key, body: { name: "plain" } });
  assert.is(minted.status, 201, minted.text);
  const plain = at(minted.body, "key") as string;
  assertError(await call(gw.url, "GET", "/api/v1/byok", { key: plain }), 403, /management/);
  assertError(await createByok(gw, plain, { provider: "openai", key: providerKey() }), 403, /management/);
  assertError(await call(gw.url, "GET", "/api/v1/byok"), 401);
});

test.run();

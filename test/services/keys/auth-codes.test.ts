import { createHash, randomBytes } from "node:crypto";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { AuthCodeRow } from "../../../server/platform/db/governance-models.js";
import { createMember, removeMember } from "../../../server/services/members/member-store.js";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO } from "../../support/shapes.js";

const test = suite<{ gw: TestGateway }>("auth codes (PKCE)");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const CALLBACK = "https://tool.example.com/callback";

/** A PKCE pair computed independently of the server (RFC 7636 §4.1, §4.2). */
function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

const inOneHour = () => new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, "Z");

const createCode = (gw: TestGateway, body: Record<string, unknown>, key = gw.key) =>
  call(gw.url, "POST", "/api/v1/auth/keys/code", { key, body });

/** The exchange needs no API key: the code (and verifier) are the credential. */
const exchange = (gw: TestGateway, body: Record<string, unknown>) =>
  call(gw.url, "POST", "/api/v1/auth/keys", { body });

async function newCode(gw: TestGateway, body: Record<string, unknown>, key = gw.key): Promise<string> {
  const res = await createCode(gw, { callback_url: CALLBACK, ...body }, key);
  assert.is(res.status, 200, res.text);
  return at(res.body, "data", "id") as string;
}

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

async function plainKey(gw: TestGateway): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "plain" } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "key") as string;
}

async function newWorkspace(gw: TestGateway, slug: string): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: slug, slug } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function managedKey(gw: TestGateway, secret: string): Promise<Record<string, unknown>> {
  const res = await call(gw.url, "GET", `/api/v1/keys/${hashKey(secret)}`, { key: gw.key });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data") as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// The flow
// ---------------------------------------------------------------------------------------------

test("S256: create a code, exchange it with the verifier; the key carries the code's settings", async ({ gw }) => {
  const workspaceId = await newWorkspace(gw, "pkce-target");
  const { verifier, challenge } = pkcePair();
  const expiresAt = inOneHour();
  const created = await createCode(gw, {
    callback_url: CALLBACK,
    code_challenge: challenge,
    code_challenge_method: "S256",
    limit: 12.5,
    usage_limit_type: "weekly",
    expires_at: expiresAt,
    key_label: "My CLI",
    workspace_id: workspaceId,
    spawn_agent: "agent-1",
    spawn_cloud: "cloud-1",
  });
  assert.is(created.status, 200, created.text);
  const data = at(created.body, "data") as Record<string, unknown>;
  assert.equal(Object.keys(data).sort(), ["app_id", "created_at", "id"]);
  assert.type(data.id, "string");
  assert.match(String(data.id), /^[A-Za-z0-9_-]{43}$/, "32 random bytes, base64url");
  assert.type(data.app_id, "number");
  assert.ok(Number.isInteger(data.app_id) && (data.app_id as number) > 0);
  assert.match(String(data.created_at), ISO);
  const stored = await AuthCodeRow.findByPk(hashKey(String(data.id)));
  assert.ok(stored, "the code is stored under its SHA-256");
  assert.is(stored.spawnAgent, "agent-1");
  assert.is(stored.spawnCloud, "cloud-1");
  assert.is(stored.codeChallengeMethod, "S256");

  const exchanged = await exchange(gw, { code: data.id, code_verifier: verifier, code_challenge_method: "S256" });
  assert.is(exchanged.status, 200, exchanged.text);
  const secret = at(exchanged.body, "key") as string;
  assert.match(secret, /^sk-gw-v1-[0-9a-f]{64}$/);
  assert.ok("user_id" in (exchanged.body as object));
  const owner = at((await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body, "data", "creator_user_id");
  assert.match(String(owner), /^user_/);
  assert.is(at(exchanged.body, "user_id"), owner, "the bootstrap key belongs to the organization's owner");

  const own = await call(gw.url, "GET", "/api/v1/key", { key: secret });
  assert.is(own.status, 200, own.text);
  assert.is(at(own.body, "data", "workspace_id"), workspaceId);
  assert.is(at(own.body, "data", "is_management_key"), false);
  assert.is(at(own.body, "data", "limit"), 12.5);

  const key = await managedKey(gw, secret);
  assert.is(key.name, "My CLI");
  assert.is(key.limit, 12.5);
  assert.is(key.limit_reset, "weekly");
  assert.is(Date.parse(String(key.expires_at)), Date.parse(expiresAt));
  assert.is(key.workspace_id, workspaceId);
  assert.is(key.is_management_key, false);
});

test("plain: the verifier equals the challenge; the method may be omitted at the exchange", async ({ gw }) => {
  const verifier = randomBytes(40).toString("base64url");
  const code = await newCode(gw, { code_challenge: verifier, code_challenge_method: "plain" });
  assert.is((await AuthCodeRow.findByPk(hashKey(code)))?.codeChallengeMethod, "plain");
  const res = await exchange(gw, { code, code_verifier: verifier });
  assert.is(res.status, 200, res.text);
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key: at(res.body, "key") as string })).status, 200);
});

test("a challenge without a method defaults to S256", async ({ gw }) => {
  const { verifier, challenge } = pkcePair();
  const code = await newCode(gw, { code_challenge: challenge });
  assert.is((await AuthCodeRow.findByPk(hashKey(code)))?.codeChallengeMethod, "S256");
  assertError(
    await exchange(gw, { code, code_verifier: challenge }),
    403,
    /code_verifier/,
    "the challenge is not the verifier under S256",
  );
  assert.is((await exchange(gw, { code, code_verifier: verifier })).status, 200);
});

test("without a challenge the code alone is exchanged; defaults: label = host, caller's workspace, no limit", async ({
  gw,
}) => {
  const code = await newCode(gw, { callback_url: "https://Apps.Example.org:8443/return?x=1" });
  const res = await exchange(gw, { code });
  assert.is(res.status, 200, res.text);
  const secret = at(res.body, "key") as string;
  const key = await managedKey(gw, secret);
  assert.is(key.name, "apps.example.org:8443", "the app name is the callback URL's host");
  assert.is(key.limit, null);
  assert.is(key.limit_reset, null);
  assert.is(key.expires_at, null);
  const caller = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.is(key.workspace_id, at(caller.body, "data", "workspace_id"));
});

test("a code works once: replay, unknown and expired codes get 403 without echoing the code", async ({ gw }) => {
  const code = await newCode(gw, {});
  assert.is((await exchange(gw, { code })).status, 200);
  const replay = await exchange(gw, { code });
  assertError(replay, 403, /already been used/);
  assert.not.ok(replay.text.includes(code), "the code is a credential");

  const unknown = await exchange(gw, { code: "c".repeat(43) });
  assertError(unknown, 403, /Unknown authorization code/);
  assert.not.ok(unknown.text.includes("c".repeat(43)));

  const stale = await newCode(gw, {});
  await AuthCodeRow.update({ expiresAt: new Date(Date.now() - 1000) }, { where: { codeHash: hashKey(stale) } });
  assertError(await exchange(gw, { code: stale }), 403, /expired/);
});

test("codes are valid for 10 minutes", async ({ gw }) => {
  const code = await newCode(gw, {});
  const row = await AuthCodeRow.findByPk(hashKey(code));
  assert.ok(row);
  assert.is(row.expiresAt.getTime() - row.createdAt.getTime(), 10 * 60 * 1000);
});

test("PKCE failures: wrong verifier 403 (the code stays usable), missing verifier 400, other method 400", async ({
  gw,
}) => {
  const { verifier, challenge } = pkcePair();
  const code = await newCode(gw, { code_challenge: challenge, code_challenge_method: "S256" });
  assertError(await exchange(gw, { code, code_verifier: pkcePair().verifier }), 403, /code_verifier/);
  assertError(await exchange(gw, { code }), 400, /code_verifier/);
  assertError(
    await exchange(gw, { code, code_verifier: verifier, code_challenge_method: "plain" }),
    400,
    /code_challenge_method/,
  );
  const ok = await exchange(gw, { code, code_verifier: verifier, code_challenge_method: "S256" });
  assert.is(ok.status, 200, ok.text);
});

test("exchange input: missing code 400, unknown method 400", async ({ gw }) => {
  assertError(await exchange(gw, {}), 400, /code/);
  assertError(await exchange(gw, { code: "x", code_challenge_method: "s256" }), 400, /code_challenge_method/);
  assertError(await exchange(gw, { code: "x", code_verifier: "v".repeat(129) }), 400, /code_verifier/);
});

test("concurrent exchanges of one code: exactly one key", async ({ gw }) => {
  const { verifier, challenge } = pkcePair();
  const code = await newCode(gw, { code_challenge: challenge });
  const results = await Promise.all(Array.from({ length: 8 }, () => exchange(gw, { code, code_verifier: verifier })));
  const statuses = results.map((r) => r.status).sort();
  assert.equal(statuses, [200, 403, 403, 403, 403, 403, 403, 403], results.map((r) => r.text).join("\n"));
});

test("the key belongs to the member who created the code; if that member left, the exchange is 403", async ({ gw }) => {
  const organizationId = at(
    (await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body,
    "data",
    "organization_id",
  ) as string;
  const member = await createMember(organizationId, {
    email: "pkce-member@example.com",
    firstName: null,
    lastName: null,
    role: "org:admin",
  });
  const memberKeyRes = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "member management", creator_user_id: member.id, is_management_key: true },
  });
  assert.is(memberKeyRes.status, 201, memberKeyRes.text);
  const memberKey = at(memberKeyRes.body, "key") as string;

  const first = await exchange(gw, { code: await newCode(gw, {}, memberKey) });
  assert.is(first.status, 200, first.text);
  assert.is(at(first.body, "user_id"), member.id);
  assert.is((await managedKey(gw, at(first.body, "key") as string)).creator_user_id, member.id);

  const pending = await newCode(gw, {}, memberKey);
  await removeMember(organizationId, member.id);
  assertError(await exchange(gw, { code: pending }), 403, /no longer in the organization/);
});

// ---------------------------------------------------------------------------------------------
// Creating codes: input rules
// ---------------------------------------------------------------------------------------------

test("callback_url: https anywhere, http only on localhost / 127.0.0.1, never with credentials", async ({ gw }) => {
  for (const url of [
    "https://app.example.com/cb",
    "http://localhost:3000",
    "http://127.0.0.1:8080/cb",
    "https://localhost/cb",
    "https://127.0.0.1:9/x",
  ]) {
    const res = await createCode(gw, { callback_url: url });
    assert.is(res.status, 200, `${url}: ${res.text}`);
  }
  for (const url of [
    "http://example.com/cb",
    "ftp://example.com/cb",
    "https://user:pw@example.com/cb",
    "https://user@example.com/cb",
    "not a url",
    "/relative/cb",
    "http://[::1]:3000/cb",
    "javascript:alert(1)",
  ]) {
    assertError(await createCode(gw, { callback_url: url }), 400, /callback_url/, url);
  }
  assertError(await createCode(gw, {}), 400, /callback_url/);
  assertError(await createCode(gw, { callback_url: `https://example.com/${"a".repeat(2048)}` }), 400, /callback_url/);
});

test("expires_at: UTC with seconds (fraction allowed) and in the future; anything else 400", async ({ gw }) => {
  const year = new Date().getUTCFullYear() + 2;
  for (const value of [`${year}-01-01T00:00:00Z`, `${year}-06-30T12:34:56.789Z`, `${year}-06-30T12:34:56.1Z`]) {
    const res = await createCode(gw, { callback_url: CALLBACK, expires_at: value });
    assert.is(res.status, 200, `${value}: ${res.text}`);
  }
  for (const value of [
    `${year}-01-01T00:00Z`,
    "2020-01-01T00:00:00Z",
    `${year}-01-01T00:00:00+02:00`,
    `${year}-01-01T00:00:00`,
    `${year}-02-30T00:00:00Z`,
    `${year}-01-01T24:00:00Z`,
    `${year}-01-01`,
    "tomorrow",
  ]) {
    assertError(await createCode(gw, { callback_url: CALLBACK, expires_at: value }), 400, /expires_at/, value);
  }
  assertError(await createCode(gw, { callback_url: CALLBACK, expires_at: 1893456000 }), 400, /expires_at/);
});

test("key_label: at most 100 characters", async ({ gw }) => {
  const ok = await newCode(gw, { key_label: "l".repeat(100) });
  const res = await exchange(gw, { code: ok });
  assert.is((await managedKey(gw, at(res.body, "key") as string)).name, "l".repeat(100));
  assertError(await createCode(gw, { callback_url: CALLBACK, key_label: "l".repeat(101) }), 400, /key_label/);
  assertError(await createCode(gw, { callback_url: CALLBACK, key_label: "" }), 400, /key_label/);
});

test("challenge, method, limit and interval rules give 400 naming the field", async ({ gw }) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ code_challenge: "a".repeat(42) }, /code_challenge/],
    [{ code_challenge: "a".repeat(129) }, /code_challenge/],
    [{ code_challenge: `${"a".repeat(42)}+` }, /code_challenge/],
    [{ code_challenge_method: "S256" }, /code_challenge/],
    [{ code_challenge: pkcePair().challenge, code_challenge_method: "S512" }, /code_challenge_method/],
    [{ limit: -1 }, /limit/],
    [{ limit: "5" }, /limit/],
    [{ usage_limit_type: "yearly" }, /usage_limit_type/],
    [{ workspace_id: "not-a-uuid" }, /workspace_id/],
    [{ spawn_agent: "a".repeat(257) }, /spawn_agent/],
  ];
  for (const [body, message] of cases) {
    assertError(
      await createCode(gw, { callback_url: CALLBACK, ...body }),
      400,
      message,
      JSON.stringify(body).slice(0, 80),
    );
  }
});

test(
  "creating codes: " + "401 without a key, 403 for a non-management key, 404 for another organization's workspace",
  async ({ gw }) => {
    assertError(await call(gw.url, "POST", "/api/v1/auth/keys/code", { body: { callback_url: CALLBACK } }), 401);
    assertError(await createCode(gw, { callback_url: CALLBACK }, await plainKey(gw)), 403, /management keys/);
    const other = await seedOrganization("pkce-other-org");
    assertError(await createCode(gw, { callback_url: CALLBACK, workspace_id: other.workspaceId }), 404);
    assertError(
      await createCode(gw, { callback_url: CALLBACK, workspace_id: "00000000-0000-4000-8000-000000000000" }),
      404,
    );
  },
);

test("409: a challenge already pending in the organization; free again once its code is used", async ({ gw }) => {
  const { verifier, challenge } = pkcePair();
  const code = await newCode(gw, { code_challenge: challenge });
  assertError(await createCode(gw, { callback_url: CALLBACK, code_challenge: challenge }), 409);
  assertError(
    await createCode(gw, {
      callback_url: "https://other.example.com/cb",
      code_challenge: challenge,
      code_challenge_method: "S256",
    }),
    409,
  );
  // Concurrent requests with one fresh challenge: only one code.
  const fresh = pkcePair().challenge;
  const racing = await Promise.all(
    Array.from({ length: 5 }, () => createCode(gw, { callback_url: CALLBACK, code_challenge: fresh })),
  );
  assert.equal(racing.map((r) => r.status).sort(), [200, 409, 409, 409, 409]);

  assert.is((await exchange(gw, { code, code_verifier: verifier })).status, 200);
  assert.is((await createCode(gw, { callback_url: CALLBACK, code_challenge: challenge })).status, 200);
  // Another organization may use the same challenge.
  const other = await seedOrganization("pkce-409-other");
  assert.is((await createCode(gw, { callback_url: CALLBACK, code_challenge: fresh }, other.key)).status, 200);
});

test("app_id: one app per organization and callback origin", async ({ gw }) => {
  const appOf = async (callback_url: string, key = gw.key) => {
    const res = await createCode(gw, { callback_url }, key);
    assert.is(res.status, 200, res.text);
    return at(res.body, "data", "app_id") as number;
  };
  const a = await appOf("https://apps.example.net/one");
  assert.is(await appOf("https://apps.example.net/two?x=1"), a, "same origin, other path");
  assert.is(await appOf("https://APPS.example.net:443/three"), a, "the origin is normalised");
  assert.is.not(await appOf("https://other.example.net/one"), a, "another host");
  assert.is.not(await appOf("https://apps.example.net:8443/one"), a, "another port");
  const local = await appOf("http://localhost:3000/cb");
  assert.is.not(await appOf("http://localhost:3001/cb"), local);
  const other = await seedOrganization("pkce-apps-other");
  assert.is.not(await appOf("https://apps.example.net/one", other.key), a, "apps belong to one organization");
  // Concurrent first requests for a new origin agree on one app.
  const ids = await Promise.all(Array.from({ length: 5 }, () => appOf("https://burst.example.net/cb")));
  assert.is(new Set(ids).size, 1);
});

test.run();

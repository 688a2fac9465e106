import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";

const test = suite<{ gw: TestGateway }>("members");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway({ GATEWAY_OWNER_EMAIL: "boss@example.com" });
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const MEMBERS = "/api/v1/organization/members";
const addMember = (gw: TestGateway, body: unknown, key = gw.key) => call(gw.url, "POST", MEMBERS, { key, body });

async function memberId(gw: TestGateway, email: string): Promise<string> {
  const res = await addMember(gw, { email });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function plainKey(
  gw: TestGateway,
  body: Record<string, unknown> = {},
): Promise<{ status: number; secret: string; text: string }> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "member key", ...body } });
  return { status: res.status, secret: at(res.body, "key") as string, text: res.text };
}

test("create answers 201 with OpenRouter's member object; list pages with total_count", async ({ gw }) => {
  // The members other tests added, whichever ran before.
  const before = Number(at((await call(gw.url, "GET", `${MEMBERS}?limit=1`, { key: gw.key })).body, "total_count"));
  const res = await addMember(gw, {
    email: "Jane.Doe@example.com",
    first_name: "Jane",
    last_name: "Doe",
    role: "org:admin",
  });
  assert.is(res.status, 201, res.text);
  const data = at(res.body, "data") as Record<string, unknown>;
  assert.equal(Object.keys(data).sort(), ["created_at", "email", "first_name", "id", "last_name", "role"]);
  assert.match(data.id as string, /^user_[a-z0-9]{26}$/);
  assert.is(data.email, "Jane.Doe@example.com");
  assert.is(data.role, "org:admin");

  const plain = await addMember(gw, { email: "plain@example.com" });
  assert.is(at(plain.body, "data", "role"), "org:member", "the role defaults to org:member");
  assert.is(at(plain.body, "data", "first_name"), null);
  assert.is(at(plain.body, "data", "last_name"), null);

  // Oldest first: the first start's owner, the members added before this test, then this test's two.
  const page = await call(gw.url, "GET", `${MEMBERS}?limit=1&offset=${before + 1}`, { key: gw.key });
  assert.is(page.status, 200, page.text);
  assert.is(at(page.body, "total_count"), before + 2);
  assert.is((at(page.body, "data") as unknown[]).length, 1);
  assert.is(at(page.body, "data", 0, "email"), "plain@example.com", "oldest first");
});

test(
  "the first start's owner: " +
    "listed first, an admin with GATEWAY_OWNER_EMAIL, owns the bootstrap key and the keys it mints; not removable",
  async ({ gw }) => {
    const listed = await call(gw.url, "GET", MEMBERS, { key: gw.key });
    const owner = at(listed.body, "data", 0) as Record<string, unknown>;
    assert.is(owner.email, "boss@example.com");
    assert.is(owner.role, "org:admin");
    const me = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
    assert.is(at(me.body, "data", "creator_user_id"), owner.id, "a string, the bootstrap key's owner");
    const { secret } = await plainKey(gw);
    assert.is(
      at((await call(gw.url, "GET", "/api/v1/key", { key: secret })).body, "data", "creator_user_id"),
      owner.id,
      "minted by the owner's key",
    );
    const listedKeys = await call(gw.url, "GET", "/api/v1/keys", { key: gw.key });
    assert.ok(
      (at(listedKeys.body, "data") as Array<Record<string, unknown>>).every(
        (k) => typeof k.creator_user_id === "string",
      ),
      listedKeys.text,
    );
    const removed = await call(gw.url, "DELETE", `${MEMBERS}/${String(owner.id)}`, { key: gw.key });
    assert.is(removed.status, 409, removed.text);
    assert.match(String(at(removed.body, "error", "message")), /owner/);
  },
);

test("an email is a member once per organization, whatever its case: 409", async ({ gw }) => {
  await memberId(gw, "twice@example.com");
  const again = await addMember(gw, { email: "TWICE@example.com" });
  assert.is(again.status, 409, again.text);
  assert.is(at(again.body, "error", "code"), 409);
  const other = await seedOrganization("members-other");
  assert.is(
    (await addMember(gw, { email: "twice@example.com" }, other.key)).status,
    201,
    "another organization may have the same person",
  );
});

test("bad input is a 400 naming the field", async ({ gw }) => {
  const cases: Array<[unknown, string]> = [
    [{}, "email"],
    [{ email: "not-an-email" }, "email"],
    [{ email: `${"x".repeat(250)}@example.com` }, "email"],
    [{ email: "a@example.com", role: "owner" }, "role"],
    [{ email: "a@example.com", first_name: "" }, "first_name"],
    [{ email: 42 }, "email"],
  ];
  for (const [body, field] of cases) {
    const res = await addMember(gw, body);
    assert.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    assert.ok((at(res.body, "error", "message") as string).includes(field), res.text);
  }
  assert.is((await call(gw.url, "GET", `${MEMBERS}?limit=0`, { key: gw.key })).status, 400);
  assert.is((await call(gw.url, "GET", `${MEMBERS}?limit=101`, { key: gw.key })).status, 400);
});

test("only management keys; no key is 401", async ({ gw }) => {
  const { secret } = await plainKey(gw);
  for (const [method, path, body] of [
    ["GET", MEMBERS, undefined],
    ["POST", MEMBERS, { email: "x@example.com" }],
    ["DELETE", `${MEMBERS}/user_x`, undefined],
  ] as const) {
    const res = await call(gw.url, method, path, { key: secret, body });
    assert.is(res.status, 403, `${method} ${path}: ${res.text}`);
    assert.match(at(res.body, "error", "message") as string, /management keys/);
    assert.is((await call(gw.url, method, path, { body })).status, 401);
  }
});

test("a key's creator must be a member of the key's organization", async ({ gw }) => {
  const stranger = await plainKey(gw, { creator_user_id: "user_notamember00000000000000" });
  assert.is(stranger.status, 400, stranger.text);
  const other = await seedOrganization("members-foreign");
  const foreign = await addMember(gw, { email: "foreign@example.com" }, other.key);
  const crossOrg = await plainKey(gw, { creator_user_id: at(foreign.body, "data", "id") });
  assert.is(crossOrg.status, 400, "a member of another organization is not a member here");
});

test("removing a member: 404 when unknown or of another organization; the keys they created stop working", async ({
  gw,
}) => {
  const id = await memberId(gw, "leaver@example.com");
  const key = await plainKey(gw, { creator_user_id: id });
  assert.is(key.status, 201, key.text);
  const management = await plainKey(gw, { creator_user_id: id, is_management_key: true });
  assert.is(management.status, 201, management.text);
  const colleague = await plainKey(gw);
  for (const secret of [key.secret, management.secret])
    assert.is((await call(gw.url, "GET", "/api/v1/key", { key: secret })).status, 200, "working before");

  const other = await seedOrganization("members-remove");
  assert.is(
    (await call(gw.url, "DELETE", `${MEMBERS}/${id}`, { key: other.key })).status,
    404,
    "another organization cannot remove them",
  );

  const removed = await call(gw.url, "DELETE", `${MEMBERS}/${id}`, { key: gw.key });
  assert.is(removed.status, 200, removed.text);
  assert.equal(removed.body, { deleted: true });
  assert.is((await call(gw.url, "DELETE", `${MEMBERS}/${id}`, { key: gw.key })).status, 404);

  for (const secret of [key.secret, management.secret]) {
    const refused = await call(gw.url, "GET", "/api/v1/key", { key: secret });
    assert.is(refused.status, 401, refused.text);
    assert.match(String(at(refused.body, "error", "message")), /disabled/);
  }
  assert.is(
    (await call(gw.url, "POST", "/api/v1/keys", { key: management.secret, body: { name: "after leaving" } })).status,
    401,
    "their management key mints nothing",
  );
  assert.is(
    (await call(gw.url, "GET", "/api/v1/key", { key: colleague.secret })).status,
    200,
    "keys of others are untouched",
  );

  // An admin may keep one of them going on purpose: it works again, still naming its creator.
  const listed = await call(gw.url, "GET", "/api/v1/keys?include_disabled=true", { key: gw.key });
  const hash = (
    at(listed.body, "data") as Array<{ hash: string; creator_user_id: string; is_management_key: boolean }>
  ).find((k) => k.creator_user_id === id && !k.is_management_key)!.hash;
  assert.is(
    (await call(gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: gw.key, body: { disabled: false } })).status,
    200,
  );
  const own = await call(gw.url, "GET", "/api/v1/key", { key: key.secret });
  assert.is(own.status, 200, own.text);
  assert.is(at(own.body, "data", "creator_user_id"), id);
});

test("a member's management key mints keys that belong to that member", async ({ gw }) => {
  const id = await memberId(gw, "minter@example.com");
  const management = await plainKey(gw, { creator_user_id: id, is_management_key: true });
  const minted = await call(gw.url, "POST", "/api/v1/keys", { key: management.secret, body: { name: "minted" } });
  assert.is(minted.status, 201, minted.text);
  assert.is(at(minted.body, "data", "creator_user_id"), id);
});

test.run();

import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, rawRequest, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO } from "../../support/shapes.js";

const test = suite<{ gw: TestGateway }>("end-users");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const register = (gw: TestGateway, body: Record<string, unknown>, key = gw.key) =>
  call(gw.url, "POST", "/api/v1/end-users", { key, body });
const pathOf = (user: string) => `/api/v1/end-users/${encodeURIComponent(user)}`;
const getUser = (gw: TestGateway, user: string, key = gw.key) => call(gw.url, "GET", pathOf(user), { key });
const patchUser = (gw: TestGateway, user: string, body: unknown, key = gw.key) =>
  call(gw.url, "PATCH", pathOf(user), { key, body });
const list = (gw: TestGateway, query: Record<string, string>, key = gw.key) =>
  call(gw.url, "GET", `/api/v1/end-users?${new URLSearchParams(query).toString()}`, { key });

async function registered(gw: TestGateway, user: string, key = gw.key): Promise<Record<string, unknown>> {
  const res = await register(gw, { user }, key);
  assert.is(res.status, 201, `${JSON.stringify(user)}: ${res.text}`);
  return at(res.body, "data") as Record<string, unknown>;
}

function assertError(
  res: Reply | { status: number; body: unknown },
  status: number,
  message?: RegExp,
  context = "",
): void {
  assert.is(res.status, status, `${context} ${JSON.stringify(res.body)}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

test("POST /end-users registers a user: 201 with exactly the fields of 2.6", async ({ gw }) => {
  const before = Date.now();
  const res = await register(gw, { user: "user-1" });
  assert.is(res.status, 201, res.text);
  const data = at(res.body, "data") as Record<string, unknown>;
  assert.equal(
    Object.keys(data).sort(),
    ["created_at", "is_active", "updated_at", "user"],
    "no generated identifier is returned",
  );
  assert.is(data.user, "user-1");
  assert.is(data.is_active, true);
  assert.match(String(data.created_at), ISO);
  assert.match(String(data.updated_at), ISO);
  assert.ok(Math.abs(Date.parse(String(data.created_at)) - before) < 60_000);

  const fetched = await getUser(gw, "user-1");
  assert.is(fetched.status, 200, fetched.text);
  assert.equal(at(fetched.body, "data"), data);
});

test("POST /end-users: a duplicate is 409 and leaves the registration unchanged", async ({ gw }) => {
  const first = await registered(gw, "dup-user");
  const again = await register(gw, { user: "dup-user", is_active: false });
  assertError(again, 409);
  const fetched = await getUser(gw, "dup-user");
  assert.equal(at(fetched.body, "data"), first);
});

test("POST /end-users: invalid tracking strings give 400 naming user", async ({ gw }) => {
  const cases: Array<[string, unknown]> = [
    ["empty", ""],
    ["513 characters", "x".repeat(513)],
    ["NUL", "a\u0000b"],
    ["only NUL", "\u0000"],
    ["leading space", " alice"],
    ["trailing space", "alice "],
    ["leading tab", "\talice"],
    ["trailing newline", "alice\n"],
    ["only whitespace", "   "],
    ["number", 42],
    ["null", null],
  ];
  for (const [what, user] of cases) {
    assertError(await register(gw, { user }), 400, /user/, what);
  }
  assertError(await register(gw, {}), 400, /user/, "missing");
  // A lone surrogate cannot come out of JSON.stringify: send the escape itself.
  for (const raw of ['{"user":"\\ud800"}', '{"user":"a\\udc00b"}', '{"user":"\\ude00\\ud83d"}']) {
    const res = await call(gw.url, "POST", "/api/v1/end-users", { key: gw.key, raw });
    assertError(res, 400, /user/, raw);
  }
  assertError(
    await call(gw.url, "POST", "/api/v1/end-users", { key: gw.key, raw: '{"user": ' }),
    400,
    undefined,
    "malformed JSON",
  );
  const listed = await list(gw, { include_inactive: "true" });
  const stored = (at(listed.body, "data") as Array<{ user: string }>).map((u) => u.user);
  assert.not.ok(
    stored.some((u) => u === "" || [...u].length > 512 || u.includes("\u0000") || u.trim() !== u),
    "nothing invalid was stored",
  );
});

test("POST /end-users: the length limit counts characters, not bytes or UTF-16 units", async ({ gw }) => {
  const longest = await register(gw, { user: "x".repeat(512) });
  assert.is(longest.status, 201, longest.text);
  const umlauts = await register(gw, { user: "ü".repeat(512) });
  assert.is(umlauts.status, 201, "512 two-byte characters fit");
  const emoji = await register(gw, { user: "😀".repeat(512) });
  assert.is(emoji.status, 201, "512 astral characters fit");
  assert.is(at(emoji.body, "data", "user"), "😀".repeat(512));
  assertError(await register(gw, { user: "ü".repeat(513) }), 400, /user/);
  assertError(await register(gw, { user: "😀".repeat(513) }), 400, /user/);
  assert.is((await getUser(gw, "ü".repeat(512))).status, 200);
});

test("GET and PATCH address users by their URL-encoded tracking string", async ({ gw }) => {
  const users = [
    "a/b",
    "with space",
    "100%",
    "what?",
    "hash#tag",
    "plus+sign",
    "amp&eq=1",
    "ü",
    "日本",
    "😀 emoji",
    "a/../b",
    "...",
    "%2e%2e",
    "back\\slash",
    "semi;colon",
  ];
  for (const user of users) await registered(gw, user);
  for (const user of users) {
    const fetched = await getUser(gw, user);
    assert.is(fetched.status, 200, `GET ${JSON.stringify(user)}: ${fetched.text}`);
    assert.is(at(fetched.body, "data", "user"), user);
  }
  for (const user of users) {
    const patched = await patchUser(gw, user, { is_active: false });
    assert.is(patched.status, 200, `PATCH ${JSON.stringify(user)}: ${patched.text}`);
    assert.is(at(patched.body, "data", "user"), user);
    assert.is(at(patched.body, "data", "is_active"), false);
  }
  // Each PATCH touched exactly its own user.
  const listed = await list(gw, { include_inactive: "true", limit: "100" });
  for (const user of users) {
    const found = (at(listed.body, "data") as Array<{ user: string; is_active: boolean }>).filter(
      (u) => u.user === user,
    );
    assert.is(found.length, 1, JSON.stringify(user));
    assert.is(found[0]!.is_active, false, JSON.stringify(user));
  }
});

test("tracking strings are case-sensitive: Alice and alice are different users", async ({ gw }) => {
  await registered(gw, "Alice");
  await registered(gw, "alice");
  assert.is((await getUser(gw, "ALICE")).status, 404);
  assert.is((await patchUser(gw, "Alice", { is_active: false })).status, 200);
  assert.is(at((await getUser(gw, "Alice")).body, "data", "is_active"), false);
  assert.is(at((await getUser(gw, "alice")).body, "data", "is_active"), true, "the other case is a different user");
  assert.is(at((await getUser(gw, "alice")).body, "data", "user"), "alice");
});

test("PATCH is_active moves the state both ways and changes updated_at", async ({ gw }) => {
  const created = await registered(gw, "toggle-me");
  const off = await patchUser(gw, "toggle-me", { is_active: false });
  assert.is(off.status, 200, off.text);
  assert.is(at(off.body, "data", "is_active"), false);

  const fetched = await getUser(gw, "toggle-me");
  assert.is(at(fetched.body, "data", "is_active"), false);
  assert.is(at(fetched.body, "data", "created_at"), created.created_at, "created_at does not move");
  const updatedAt = at(fetched.body, "data", "updated_at") as string;
  assert.match(updatedAt, ISO);
  assert.is.not(updatedAt, created.updated_at, "updated_at changed");
  assert.ok(Date.parse(updatedAt) > Date.parse(String(created.updated_at)));

  const off2 = await patchUser(gw, "toggle-me", { is_active: false });
  assert.is(at(off2.body, "data", "is_active"), false, "setting the same value is allowed");
  const on = await patchUser(gw, "toggle-me", { is_active: true });
  assert.is(on.status, 200);
  assert.is(at(on.body, "data", "is_active"), true);
  assert.is(at((await getUser(gw, "toggle-me")).body, "data", "is_active"), true);
});

test("PATCH without a boolean is_active is 400 and changes nothing", async ({ gw }) => {
  const created = await registered(gw, "patch-bad");
  for (const body of [{}, { is_active: "false" }, { is_active: 0 }, { is_active: null }, { user: "renamed" }]) {
    assertError(await patchUser(gw, "patch-bad", body), 400, /is_active/, JSON.stringify(body));
  }
  assertError(
    await call(gw.url, "PATCH", pathOf("patch-bad"), { key: gw.key, raw: "{is_active:false}" }),
    400,
    undefined,
    "malformed JSON",
  );
  const fetched = await getUser(gw, "patch-bad");
  assert.equal(at(fetched.body, "data"), created);
});

test("unknown users and users of another organization are 404", async ({ gw }) => {
  assertError(await getUser(gw, "nobody"), 404);
  assertError(await patchUser(gw, "nobody", { is_active: false }), 404);
  assertError(await call(gw.url, "DELETE", pathOf("nobody"), { key: gw.key }), 404);

  const other = await seedOrganization("end-users-other-org");
  await registered(gw, "theirs-only", other.key);
  assertError(await getUser(gw, "theirs-only"), 404);
  assertError(await patchUser(gw, "theirs-only", { is_active: false }), 404);
  assertError(await call(gw.url, "DELETE", pathOf("theirs-only"), { key: gw.key }), 404);
  const filtered = await list(gw, { user: "theirs-only", include_inactive: "true" });
  assert.is(at(filtered.body, "total_count"), 0);
  assert.equal(at(filtered.body, "data"), []);
  assert.is(
    at((await getUser(gw, "theirs-only", other.key)).body, "data", "is_active"),
    true,
    "their user is untouched",
  );

  // The same tracking string can be registered in both organizations, independently.
  await registered(gw, "shared-user");
  await registered(gw, "shared-user", other.key);
  assert.is((await patchUser(gw, "shared-user", { is_active: false })).status, 200);
  assert.is(at((await getUser(gw, "shared-user", other.key)).body, "data", "is_active"), true);
});

test(". and .. are not addressable by path (400) but reachable through the list filter", async ({ gw }) => {
  await registered(gw, "..");
  const dot = await register(gw, { user: ".", is_active: false });
  assert.is(dot.status, 201, dot.text);

  for (const path of [
    "/api/v1/end-users/..",
    "/api/v1/end-users/.",
    "/api/v1/end-users/%2e%2e",
    "/api/v1/end-users/%2E%2E",
    "/api/v1/end-users/%2e",
    "/api/v1/end-users/.%2e",
  ]) {
    assertError(await rawRequest(gw.url, "GET", path, { key: gw.key }), 400, undefined, `GET ${path}`);
    const body = JSON.stringify({ is_active: false });
    assertError(
      await rawRequest(gw.url, "PATCH", path, { key: gw.key, body, headers: { "content-type": "application/json" } }),
      400,
      undefined,
      `PATCH ${path}`,
    );
    assertError(await rawRequest(gw.url, "DELETE", path, { key: gw.key }), 400, undefined, `DELETE ${path}`);
  }

  const dotdot = await list(gw, { user: ".." });
  assert.is(dotdot.status, 200, dotdot.text);
  assert.is(at(dotdot.body, "total_count"), 1);
  assert.is(at(dotdot.body, "data", 0, "user"), "..");
  assert.is(at(dotdot.body, "data", 0, "is_active"), true, "the 400s above changed nothing");

  const hidden = await list(gw, { user: "." });
  assert.is(hidden.status, 200);
  assert.is(at(hidden.body, "total_count"), 0, "inactive users are listed only on request");
  assert.equal(at(hidden.body, "data"), []);

  const shown = await list(gw, { user: ".", include_inactive: "true" });
  assert.is(at(shown.body, "total_count"), 1);
  assert.is(at(shown.body, "data", 0, "user"), ".");
  assert.is(at(shown.body, "data", 0, "is_active"), false);
});

test("list: ordered by user, inactive only with include_inactive, total_count counts all matches", async ({ gw }) => {
  const other = await seedOrganization("end-users-list-org");
  for (const user of ["m-2", "m-1", "m-3"]) await registered(gw, user, other.key);
  const off = await patchUser(gw, "m-2", { is_active: false }, other.key);
  assert.is(off.status, 200);

  const active = await list(gw, {}, other.key);
  assert.is(active.status, 200, active.text);
  assert.equal(
    (at(active.body, "data") as Array<{ user: string }>).map((u) => u.user),
    ["m-1", "m-3"],
  );
  assert.is(at(active.body, "total_count"), 2);

  const all = await list(gw, { include_inactive: "true" }, other.key);
  assert.equal(
    (at(all.body, "data") as Array<{ user: string }>).map((u) => u.user),
    ["m-1", "m-2", "m-3"],
  );
  assert.is(at(all.body, "total_count"), 3);

  const page = await list(gw, { include_inactive: "true", limit: "1", offset: "1" }, other.key);
  assert.equal(
    (at(page.body, "data") as Array<{ user: string }>).map((u) => u.user),
    ["m-2"],
  );
  assert.is(at(page.body, "total_count"), 3, "total_count ignores paging");

  const exact = await list(gw, { user: "m-1" }, other.key);
  assert.is(at(exact.body, "total_count"), 1);
  assert.is(at(exact.body, "data", 0, "user"), "m-1");
});

test("DELETE deactivates: the user stays, inactive, and is listed only with include_inactive", async ({ gw }) => {
  await registered(gw, "leaving/user ü");
  const deleted = await call(gw.url, "DELETE", pathOf("leaving/user ü"), { key: gw.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.is(at(deleted.body, "data", "user"), "leaving/user ü");
  assert.is(at(deleted.body, "data", "is_active"), false);

  const fetched = await getUser(gw, "leaving/user ü");
  assert.is(fetched.status, 200);
  assert.is(at(fetched.body, "data", "is_active"), false);

  assert.is(at((await list(gw, { user: "leaving/user ü" })).body, "total_count"), 0);
  assert.is(at((await list(gw, { user: "leaving/user ü", include_inactive: "true" })).body, "total_count"), 1);

  const again = await call(gw.url, "DELETE", pathOf("leaving/user ü"), { key: gw.key });
  assert.is(again.status, 200);
  assert.is(at(again.body, "data", "is_active"), false);
  assertError(await register(gw, { user: "leaving/user ü" }), 409, undefined, "a deactivated user is still registered");
  assert.is(
    at((await patchUser(gw, "leaving/user ü", { is_active: true })).body, "data", "is_active"),
    true,
    "and can be reactivated",
  );
});

test("end-user operations: non-management key 403, no key 401", async ({ gw }) => {
  await registered(gw, "guarded");
  const created = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "plain" } });
  const secret = at(created.body, "key") as string;
  const operations: Array<[string, string, unknown]> = [
    ["GET", "/api/v1/end-users", undefined],
    ["POST", "/api/v1/end-users", { user: "sneaky" }],
    ["GET", pathOf("guarded"), undefined],
    ["PATCH", pathOf("guarded"), { is_active: false }],
    ["DELETE", pathOf("guarded"), undefined],
  ];
  for (const [method, path, body] of operations) {
    assertError(await call(gw.url, method, path, { key: secret, body }), 403, /management keys/, `${method} ${path}`);
    assertError(await call(gw.url, method, path, { body }), 401, undefined, `${method} ${path} without key`);
  }
  assert.is(at((await getUser(gw, "guarded")).body, "data", "is_active"), true, "nothing changed");
  assert.is((await getUser(gw, "sneaky")).status, 404, "nothing was registered");
});

test.run();

import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { ISO, UUID } from "../../support/shapes.js";
import {
  assertError,
  assignKeys,
  assignMembers,
  guardrailsSuite,
  type Json,
  newGuardrail,
  newKey,
  newMember,
  unassignKeys,
  unassignMembers,
} from "./guardrails-fixture.js";

/** A guardrail's key and member assignments: assign, list, unassign, and the keys and members refused. */
const test = guardrailsSuite("guardrails: assignments");

test("key assignments: assign counts only new keys, list shows every field, unassign counts removals", async ({
  gw,
}) => {
  const id = (await newGuardrail(gw, { name: "keys" })).id as string;
  const a = await newKey(gw, { name: "key a" });
  const b = await newKey(gw, { name: "key b" });

  let res = await assignKeys(gw, id, [a.hash, a.hash]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { assigned_count: 1 }, "duplicates in one request count once");
  res = await assignKeys(gw, id, [a.hash, b.hash]);
  assert.equal(res.body, { assigned_count: 1 }, "a already assigned");
  res = await assignKeys(gw, id, [b.hash]);
  assert.equal(res.body, { assigned_count: 0 });

  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(list.status, 200, list.text);
  assert.is(at(list.body, "total_count"), 2);
  const data = at(list.body, "data") as Json[];
  const byHash = new Map(data.map((row) => [row.key_hash, row]));
  for (const key of [a, b]) {
    const row = byHash.get(key.hash)!;
    assert.ok(row, `assignment of ${key.name}`);
    assert.equal(Object.keys(row).sort(), [
      "assigned_by",
      "created_at",
      "guardrail_id",
      "id",
      "key_hash",
      "key_label",
      "key_name",
    ]);
    assert.match(String(row.id), UUID);
    assert.is(row.guardrail_id, id);
    assert.is(row.key_label, key.label);
    assert.is(row.key_name, key.name);
    assert.match(String(row.assigned_by), /^user_/, "the bootstrap key belongs to the organization's owner");
    assert.match(String(row.created_at), ISO);
  }
  assert.is(data[0]!.key_hash, b.hash, "newest first");

  res = await unassignKeys(gw, id, [a.hash, a.hash]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { unassigned_count: 1 });
  res = await unassignKeys(gw, id, [a.hash]);
  assert.equal(res.body, { unassigned_count: 0 }, "no longer assigned");
  const after = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(after.body, "total_count"), 1);
  assert.is(at(after.body, "data", 0, "key_hash"), b.hash);
});

test("key assignments: assigned_by is the calling key's member when it has one", async ({ gw }) => {
  const member = await newMember(gw);
  const manager = await newKey(gw, { name: "member manager", is_management_key: true, creator_user_id: member });
  const id = (await newGuardrail(gw)).id as string;
  const key = await newKey(gw);
  assert.equal((await assignKeys(gw, id, [key.hash], manager.secret)).body, { assigned_count: 1 });
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(list.body, "data", 0, "assigned_by"), member);
});

test("key assignments: unknown or foreign key hashes are a 400 naming them, and nothing is assigned", async ({
  gw,
  other,
}) => {
  const id = (await newGuardrail(gw)).id as string;
  const mine = await newKey(gw);
  const theirs = await call(gw.url, "POST", "/api/v1/keys", { key: other.key, body: { name: "theirs" } });
  const theirHash = at(theirs.body, "data", "hash") as string;
  const unknown = "f".repeat(64);

  let res = await assignKeys(gw, id, [mine.hash, unknown, theirHash]);
  assertError(res, 400, /key hashes/);
  assert.ok(res.text.includes(unknown) && res.text.includes(theirHash), "names every unknown hash");
  assert.not.ok(res.text.includes(mine.hash), "does not name the known one");
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(list.body, "total_count"), 0, "the known key was not assigned either");

  assert.equal((await assignKeys(gw, id, [mine.hash])).body, { assigned_count: 1 });
  res = await unassignKeys(gw, id, [mine.hash, unknown]);
  assertError(res, 400, /key hashes/);
  assert.ok(res.text.includes(unknown));
  const still = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(still.body, "total_count"), 1, "nothing was unassigned");

  for (const hashes of [[], [""], "abc", [1], undefined]) {
    assertError(await assignKeys(gw, id, hashes), 400, /key_hashes/, JSON.stringify(hashes));
    assertError(await unassignKeys(gw, id, hashes), 400, /key_hashes/, JSON.stringify(hashes));
  }
});

test("key assignments list: offset/limit paging with total_count; limit 0 and 101 are 400", async ({ gw }) => {
  const id = (await newGuardrail(gw)).id as string;
  const hashes: string[] = [];
  for (let i = 0; i < 5; i++) hashes.push((await newKey(gw, { name: `paged ${i}` })).hash);
  assert.equal((await assignKeys(gw, id, hashes)).body, { assigned_count: 5 });
  const page = (query: string) =>
    call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys${query}`, { key: gw.key });

  const seen: unknown[] = [];
  for (let offset = 0; offset < 5; offset += 2) {
    const res = await page(`?offset=${offset}&limit=2`);
    assert.is(res.status, 200, res.text);
    assert.is(at(res.body, "total_count"), 5);
    seen.push(...(at(res.body, "data") as Json[]).map((row) => row.key_hash));
  }
  assert.equal([...seen].sort(), [...hashes].sort(), "pages cover every assignment exactly once");
  assert.is((at((await page("?limit=100")).body, "data") as unknown[]).length, 5);
  assert.is((at((await page("?limit=1")).body, "data") as unknown[]).length, 1);
  assert.equal(at((await page("?offset=5")).body, "data"), []);
  for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?offset=x"])
    assertError(await page(query), 400, /limit|offset/, query);
});

test("member assignments: assigned_count counts only new members; list and unassign", async ({ gw }) => {
  const id = (await newGuardrail(gw, { name: "members" })).id as string;
  const alice = await newMember(gw);
  const bob = await newMember(gw);

  let res = await assignMembers(gw, id, [alice, alice]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { assigned_count: 1 });
  res = await assignMembers(gw, id, [alice, bob]);
  assert.equal(res.body, { assigned_count: 1 });
  res = await assignMembers(gw, id, [alice, bob]);
  assert.equal(res.body, { assigned_count: 0 });

  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.is(list.status, 200, list.text);
  assert.is(at(list.body, "total_count"), 2);
  const data = at(list.body, "data") as Json[];
  const organizationId = at(
    await call(gw.url, "GET", "/api/v1/key", { key: gw.key }),
    "body",
    "data",
    "organization_id",
  );
  for (const row of data) {
    assert.equal(Object.keys(row).sort(), [
      "assigned_by",
      "created_at",
      "guardrail_id",
      "id",
      "organization_id",
      "user_id",
    ]);
    assert.match(String(row.id), UUID);
    assert.is(row.guardrail_id, id);
    assert.is(row.organization_id, organizationId);
    assert.match(String(row.assigned_by), /^user_/, "the bootstrap key belongs to the organization's owner");
    assert.match(String(row.created_at), ISO);
  }
  assert.equal(
    data.map((row) => row.user_id),
    [bob, alice],
    "newest first",
  );
  const paged = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members?offset=1&limit=1`, {
    key: gw.key,
  });
  assert.is(at(paged.body, "total_count"), 2);
  assert.equal(
    (at(paged.body, "data") as Json[]).map((row) => row.user_id),
    [alice],
  );
  for (const query of ["?limit=0", "?limit=101", "?offset=-1"]) {
    assertError(
      await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members${query}`, { key: gw.key }),
      400,
      /limit|offset/,
      query,
    );
  }

  res = await unassignMembers(gw, id, [alice, alice]);
  assert.equal(res.body, { unassigned_count: 1 });
  res = await unassignMembers(gw, id, [alice]);
  assert.equal(res.body, { unassigned_count: 0 });
  const after = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.equal(
    (at(after.body, "data") as Json[]).map((row) => row.user_id),
    [bob],
  );
});

test("member assignments: assigned_by is the calling key's member", async ({ gw }) => {
  const admin = await newMember(gw);
  const manager = await newKey(gw, { name: "admin manager", is_management_key: true, creator_user_id: admin });
  const id = (await newGuardrail(gw)).id as string;
  const member = await newMember(gw);
  assert.equal((await assignMembers(gw, id, [member], manager.secret)).body, { assigned_count: 1 });
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.is(at(list.body, "data", 0, "assigned_by"), admin);
});

test("member assignments: unknown members are a 400 naming them and nothing is assigned; bad lists are 400", async ({
  gw,
}) => {
  const id = (await newGuardrail(gw)).id as string;
  const member = await newMember(gw);
  const res = await assignMembers(gw, id, [member, "user_nobody", "user_ghost"]);
  assertError(res, 400, /member user ids/);
  assert.ok(res.text.includes("user_nobody") && res.text.includes("user_ghost"));
  assert.not.ok(res.text.includes(member));
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.is(at(list.body, "total_count"), 0, "the known member was not assigned either");

  assertError(await unassignMembers(gw, id, ["user_nobody"]), 400, /member user ids/);
  for (const ids of [[], [""], "user_x", [7], undefined]) {
    assertError(await assignMembers(gw, id, ids), 400, /member_user_ids/, JSON.stringify(ids));
    assertError(await unassignMembers(gw, id, ids), 400, /member_user_ids/, JSON.stringify(ids));
  }
});

test("member assignments: members of another organization are unknown", async ({ gw, other }) => {
  const id = (await newGuardrail(gw)).id as string;
  const foreign = await call(gw.url, "POST", "/api/v1/organization/members", {
    key: other.key,
    body: { email: "foreign@example.com" },
  });
  assert.is(foreign.status, 201, foreign.text);
  const foreignId = at(foreign.body, "data", "id") as string;
  const res = await assignMembers(gw, id, [foreignId]);
  assertError(res, 400, /member user ids/);
  assert.ok(res.text.includes(foreignId));
});

test.run();

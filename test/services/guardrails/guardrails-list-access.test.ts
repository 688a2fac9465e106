import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import {
  assertError,
  getGuardrail,
  GUARDRAIL_FIELDS,
  guardrailsSuite,
  type Json,
  MISSING_ID,
  newGuardrail,
  newKey,
  newWorkspace,
} from "./guardrails-fixture.js";

/** GET /guardrails, and who may reach a guardrail by each route. */
const test = guardrailsSuite("guardrails: list and access");

const ROUTES: Array<[string, (id: string) => string, Json | undefined]> = [
  ["POST", () => "/api/v1/guardrails", { name: "x" }],
  ["GET", () => "/api/v1/guardrails", undefined],
  ["GET", (id) => `/api/v1/guardrails/${id}`, undefined],
  ["PATCH", (id) => `/api/v1/guardrails/${id}`, { name: "y" }],
  ["DELETE", (id) => `/api/v1/guardrails/${id}`, undefined],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/keys`, { key_hashes: ["a"] }],
  ["GET", (id) => `/api/v1/guardrails/${id}/assignments/keys`, undefined],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/keys/remove`, { key_hashes: ["a"] }],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/members`, { member_user_ids: ["a"] }],
  ["GET", (id) => `/api/v1/guardrails/${id}/assignments/members`, undefined],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/members/remove`, { member_user_ids: ["a"] }],
];

test("every guardrail operation: 401 without a key, 403 for a non-management key, and nothing changes", async ({
  gw,
}) => {
  const guardrail = await newGuardrail(gw, { name: "protected" });
  const plain = await newKey(gw);
  for (const [method, path, body] of ROUTES) {
    const url = path(guardrail.id as string);
    assertError(await call(gw.url, method, url, { body }), 401, undefined, `${method} ${url}`);
    assertError(
      await call(gw.url, method, url, { key: plain.secret, body }),
      403,
      /management keys/,
      `${method} ${url}`,
    );
  }
  const after = await getGuardrail(gw, guardrail.id as string);
  assert.is(at(after.body, "data", "name"), "protected");
});

test("every operation on one guardrail: 404 for another organization's guardrail and for an unknown id", async ({
  gw,
  other,
}) => {
  const theirs = await newGuardrail(gw, { name: "theirs" }, other.key);
  for (const [method, path, body] of ROUTES.slice(2)) {
    for (const id of [theirs.id as string, MISSING_ID]) {
      assertError(
        await call(gw.url, method, path(id), { key: gw.key, body }),
        404,
        /Guardrail/,
        `${method} ${path(id)}`,
      );
    }
    assertError(await call(gw.url, method, path("nope"), { key: gw.key, body }), 400, /id/, `${method} bad id`);
  }
  assert.is(at((await getGuardrail(gw, theirs.id as string, other.key)).body, "data", "name"), "theirs", "untouched");
});

test("GET /guardrails: one workspace, newest first, paged with total_count", async ({ gw, other }) => {
  const workspaceId = await newWorkspace(gw, "guardrail-list");
  const names = ["first", "second", "third"];
  const ids: string[] = [];
  for (const name of names) ids.push((await newGuardrail(gw, { name, workspace_id: workspaceId })).id as string);
  const list = (query: string) =>
    call(gw.url, "GET", `/api/v1/guardrails?workspace_id=${workspaceId}${query}`, { key: gw.key });

  const all = await list("");
  assert.is(all.status, 200, all.text);
  // The workspace's own default guardrail, created with it, is the oldest.
  assert.is(at(all.body, "total_count"), 4);
  const data = at(all.body, "data") as Json[];
  assert.equal(
    data.map((g) => g.name),
    ["third", "second", "first", "Default guardrail"],
  );
  for (const field of GUARDRAIL_FIELDS) assert.ok(field in data[0]!, `missing ${field}`);

  const page = await list("&offset=1&limit=1");
  assert.is(at(page.body, "total_count"), 4);
  assert.equal(
    (at(page.body, "data") as Json[]).map((g) => g.id),
    [ids[1]],
  );
  const beyond = await list("&offset=10");
  assert.equal(at(beyond.body, "data"), []);
  assert.is(at(beyond.body, "total_count"), 4);

  // Without a filter: the caller key's workspace, which holds none of these.
  const own = await call(gw.url, "GET", "/api/v1/guardrails", { key: gw.key });
  assert.is(own.status, 200, own.text);
  const ownIds = (at(own.body, "data") as Json[]).map((g) => g.id);
  for (const id of ids) assert.not.ok(ownIds.includes(id));

  for (const query of ["&limit=0", "&limit=101", "&offset=-1", "&limit=abc"])
    assertError(await list(query), 400, /limit|offset/, query);
  assertError(await call(gw.url, "GET", "/api/v1/guardrails?workspace_id=nope", { key: gw.key }), 400, /workspace_id/);
  assertError(await call(gw.url, "GET", `/api/v1/guardrails?workspace_id=${other.workspaceId}`, { key: gw.key }), 404);
});

test.run();

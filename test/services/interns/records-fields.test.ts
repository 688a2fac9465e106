import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { CATALOG_MODEL, createIntern, createdIntern, runningIntern, type Json } from "../../support/interns.js";
import { ISO, UUID } from "../../support/shapes.js";
import { path, recordsSuite, UNKNOWN_ID } from "./records-fixture.js";

/** An intern record's fields: create, update and list, and the input each refuses. */
const test = recordsSuite("intern records: fields");

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

test.run();

import * as assert from "uvu/assert";
import { at, call, rawRequest } from "../../support/http.js";
import { REGIONAL_HOST, createdIntern, runningIntern, type Json } from "../../support/interns.js";
import { path, recordsSuite, UNKNOWN_ID } from "./records-fixture.js";

/**
 * Who reaches an intern's records: its workspace, not another, not outside the programme or on a regional host, and
 * the intern's own key only its own.
 */
const test = recordsSuite("intern records: access");

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

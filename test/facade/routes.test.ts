import { getOption, hasOption, type DescMethod } from "@bufbuild/protobuf";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { parseTemplate, splitPath } from "../../facade/path-template.js";
import { RouteTable, type Route } from "../../facade/route-table.js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { allServices } from "../../wire/services.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call, rawRequest } from "../support/http.js";
import { seedOrganization } from "../support/seed.js";

/**
 * Every `google.api.http` rule of the protos becomes a route that the real gateway serves: the
 * facade never answers its own route miss (404 "No route …") or 405 for a path and verb the protos
 * declare, and every declared method has an implementation.
 */
const test = suite<{ gw: TestGateway; table: RouteTable; entitledKey: string; unimplemented: Set<DescMethod> }>(
  "facade routes",
);

test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.table = RouteTable.fromServices(allServices);
  // Methods of the interns and private-endpoints programmes answer 404/403 before reaching their
  // handlers outside them; this organization has both, whatever GATEWAY_BOOTSTRAP_ENTITLEMENTS says.
  ctx.entitledKey = (await seedOrganization("routes-entitled", ["interns", "private_endpoints"])).key;
  const impls = ctx.gw.gateway.impls;
  ctx.unimplemented = new Set();
  for (const service of allServices) {
    const impl = impls.get(service) ?? {};
    for (const method of service.methods) if (!(method.localName in impl)) ctx.unimplemented.add(method);
  }
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const UUID = "3f1c2a4e-8b7d-4c6e-9a51-0d2e7f3b6c18";

/** The route's template with every variable replaced by a value its field would plausibly hold. */
function concretePath(route: Route): string {
  return (
    "/" +
    route.segments
      .map((segment) => {
        if (segment.kind === "literal") return segment.value;
        const name = segment.field.at(-1)!;
        if (name === "id" || name.endsWith("_id")) return UUID;
        if (name === "interval") return "daily";
        return "x";
      })
      .join("/")
  );
}

const label = (route: Route) => `${route.verb} ${route.template} (${route.method.parent.name}.${route.method.name})`;

const send = (gw: TestGateway, route: Route, key?: string) =>
  call(gw.url, route.verb, concretePath(route), {
    ...(key ? { key } : {}),
    ...(route.body === "" ? {} : { body: {} }),
  });

function isRouteMiss(status: number, body: unknown): boolean {
  return status === 405 || (status === 404 && String(at(body, "error", "message")).startsWith("No route"));
}

test("the route table holds every google.api.http rule, and each concrete path matches its own route", ({ table }) => {
  let rules = 0;
  for (const service of allServices) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const rule = getOption(method, http);
      rules += 1 + rule.additionalBindings.length;
      assert.ok(
        table.routes.some((r) => r.method === method),
        `${service.name}.${method.name} has no route`,
      );
    }
  }
  assert.ok(rules > 50, "the protos declare the API's routes");
  assert.is(table.routes.length, rules);
  for (const route of table.routes) {
    const match = table.match(route.verb, splitPath(concretePath(route)).segments);
    assert.is(match.kind, "route", label(route));
    if (match.kind === "route")
      assert.is(match.route, route, `${label(route)} is shadowed by ${match.route.method.name}`);
  }
});

test("without a key, every route is served: never the facade's route miss or 405", async ({ gw, table }) => {
  for (const route of table.routes) {
    const res = await send(gw, route);
    assert.not.ok(isRouteMiss(res.status, res.body), `${label(route)} answered ${res.status} ${res.text}`);
    assert.ok(res.status < 500, `${label(route)} answered ${res.status} ${res.text}`);
    if (res.status >= 400) assert.type(at(res.body, "error", "message"), "string", `${label(route)}: ${res.text}`);
  }
});

test("every method is implemented, and with an entitled management key every route answers without a 5xx", async ({
  gw,
  table,
  entitledKey,
  unimplemented,
}) => {
  assert.equal(
    [...unimplemented].map((m) => `${m.parent.name}.${m.name}`),
    [],
  );
  for (const route of table.routes) {
    const res = await send(gw, route, entitledKey);
    assert.not.ok(isRouteMiss(res.status, res.body), `${label(route)} answered ${res.status} ${res.text}`);
    assert.ok(res.status < 500, `${label(route)} answered ${res.status} ${res.text}`);
  }
});

test("literal segments win over variables", ({ table }) => {
  const models = table.match("GET", ["api", "v1", "videos", "models"]);
  assert.is(models.kind, "route");
  if (models.kind === "route") {
    assert.is(models.route.method.name, "ListVideoModels");
    assert.equal(models.values, []);
  }
  const video = table.match("GET", ["api", "v1", "videos", "abc"]);
  assert.is(video.kind, "route");
  if (video.kind === "route") {
    assert.is(video.route.method.name, "GetVideo");
    assert.equal(video.values, ["abc"]);
    assert.equal(
      video.route.variableFields.map((path) => path.map((step) => step.key)),
      [["job_id"]],
    );
  }
  // A literal that leads nowhere for the rest of the path still falls back to the variable.
  const content = table.match("GET", ["api", "v1", "videos", "models", "content"]);
  assert.is(content.kind, "route");
  if (content.kind === "route") {
    assert.is(content.route.method.name, "GetVideoContent");
    assert.equal(content.values, ["models"]);
  }
});

test("the real gateway honours the precedence: /videos/models is the model list, not a job", async ({
  gw,
  entitledKey,
}) => {
  const models = await call(gw.url, "GET", "/api/v1/videos/models", { key: entitledKey });
  const job = await call(gw.url, "GET", "/api/v1/videos/abc", { key: entitledKey });
  assert.is(models.status, 200, models.text);
  assert.ok(Array.isArray(at(models.body, "data")), "the model list");
  assert.is(job.status, 404, job.text);
  assert.match(String(at(job.body, "error", "message")), /abc/);
});

test("unknown path: 404 in the JSON error envelope", async ({ gw }) => {
  for (const path of ["/api/v1/nope", "/api/v2/key", "/api/v1/keys/a/b/c", "/api/v1"]) {
    const res = await call(gw.url, "GET", path, { key: gw.key });
    assert.is(res.status, 404, path);
    assert.is(res.headers.get("content-type"), "application/json");
    assert.is(at(res.body, "error", "code"), 404);
    assert.match(String(at(res.body, "error", "message")), /^No route/);
  }
});

test("wrong verb: 405 with an Allow header listing the verbs of the path", async ({ gw }) => {
  const res = await call(gw.url, "DELETE", "/api/v1/key", { key: gw.key });
  assert.is(res.status, 405);
  assert.is(res.headers.get("allow"), "GET");
  assert.is(at(res.body, "error", "code"), 405);
  assert.type(at(res.body, "error", "message"), "string");

  const keys = await call(gw.url, "PUT", "/api/v1/keys", { key: gw.key, body: {} });
  assert.is(keys.status, 405);
  assert.is(keys.headers.get("allow"), "GET, POST");

  const key = await call(gw.url, "POST", `/api/v1/keys/${"a".repeat(64)}`, { key: gw.key, body: {} });
  assert.is(key.status, 405);
  assert.is(key.headers.get("allow"), "DELETE, GET, PATCH");
});

test("a trailing slash is a different path: 404", async ({ gw }) => {
  for (const path of ["/api/v1/key/", "/api/v1/keys/", "/api/v1/workspaces/"]) {
    const res = await call(gw.url, "GET", path, { key: gw.key });
    assert.is(res.status, 404, path);
    assert.match(String(at(res.body, "error", "message")), /^No route/);
  }
});

test("an empty segment never fills a variable", async ({ gw }) => {
  const res = await rawRequest(gw.url, "GET", "/api/v1/workspaces//budgets", { key: gw.key });
  assert.is(res.status, 404);
  assert.is(at(res.body, "error", "code"), 404);
});

test("parseTemplate accepts the supported subset", () => {
  assert.equal(parseTemplate("/api/v1/keys/{hash}"), [
    { kind: "literal", value: "api" },
    { kind: "literal", value: "v1" },
    { kind: "literal", value: "keys" },
    { kind: "variable", field: ["hash"] },
  ]);
  assert.equal(parseTemplate("/a/{b.c=*}"), [
    { kind: "literal", value: "a" },
    { kind: "variable", field: ["b", "c"] },
  ]);
});

test("parseTemplate rejects templates the facade cannot serve correctly", () => {
  for (const template of [
    "/v1/{name=**}",
    "/a/{b}:verb",
    "/a/{b=c/*}",
    "/a/*",
    "/a/**",
    "a/b",
    "/a/{B}",
    "/a/{b}/{c",
  ]) {
    assert.throws(() => parseTemplate(template), /./, template);
  }
});

test.run();

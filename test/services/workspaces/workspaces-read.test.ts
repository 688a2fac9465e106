import * as assert from "uvu/assert";
import { WorkspaceRow } from "../../../server/platform/db/models.js";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID } from "../../support/shapes.js";
import { assertError, type Json, newWorkspace, plainKey, workspacesSuite } from "./workspaces-fixture.js";
import {
  assertAllFields,
  getBudget,
  getWorkspace,
  listBudgets,
  listWorkspaces,
  MISSING_UUID,
  path,
  putBudget,
} from "./workspace-routes.js";

/** GET one workspace and the list, GET a workspace's budgets, and who may read them. */
const test = workspacesSuite("workspaces: get and list");

test("GET by UUID and by slug returns every field of 2.5, as created", async ({ gw }) => {
  const created = await newWorkspace(gw, "get-me", {
    description: "d",
    default_text_model: "acme/text",
    default_provider_sort: "latency",
    disabled_server_tools: ["svc:shell"],
    io_logging_api_key_ids: ["k1"],
    io_logging_sampling_rate: 0.5,
    include_byok_in_budgets: true,
  });
  for (const ref of [created.id as string, created.slug as string, (created.id as string).toUpperCase()]) {
    const res = await getWorkspace(gw, ref);
    assert.is(res.status, 200, `${ref}: ${res.text}`);
    const data = at(res.body, "data") as Json;
    assertAllFields(data);
    assert.equal(data, created, ref);
  }
});

test("GET: unknown UUID or slug 404; another organization's workspace 404 by UUID and by slug", async ({ gw }) => {
  assertError(await getWorkspace(gw, MISSING_UUID), 404);
  assertError(await getWorkspace(gw, "no-such-workspace"), 404);
  const other = await seedOrganization("get-other-org");
  const theirs = await newWorkspace(gw, "their-secret", {}, other.key);
  assertError(await getWorkspace(gw, theirs.id as string), 404, undefined, "by UUID");
  assertError(await getWorkspace(gw, theirs.slug as string), 404, undefined, "by slug");
  assertError(await getWorkspace(gw, other.workspaceId), 404, undefined, "their default");
  assert.is((await getWorkspace(gw, theirs.slug as string, other.key)).status, 200, "still theirs");
});

test("workspace routes: 401 without a key, 403 for a non-management key", async ({ gw }) => {
  const ws = await newWorkspace(gw, "auth");
  const secret = await plainKey(gw);
  const routes: Array<[string, string, unknown]> = [
    ["GET", "/api/v1/workspaces", undefined],
    ["GET", path(ws.id as string), undefined],
    ["PATCH", path(ws.id as string), { name: "stolen" }],
    ["DELETE", path(ws.id as string), undefined],
    ["GET", `${path(ws.id as string)}/budgets`, undefined],
    ["GET", `${path(ws.id as string)}/budgets/daily`, undefined],
  ];
  for (const [method, route, body] of routes) {
    assertError(await call(gw.url, method, route, { body }), 401, undefined, `${method} ${route}`);
    assertError(await call(gw.url, method, route, { key: secret, body }), 403, /management keys/, `${method} ${route}`);
  }
  assert.is(at((await getWorkspace(gw, ws.id as string)).body, "data", "name"), ws.name, "nothing changed");
});

test("GET /workspaces: {data, total_count}, oldest first, offset and limit", async ({ gw, defaultWorkspaceId }) => {
  const created = [await newWorkspace(gw, "list"), await newWorkspace(gw, "list"), await newWorkspace(gw, "list")];
  const all = await listWorkspaces(gw);
  assert.is(all.status, 200, all.text);
  const data = at(all.body, "data") as Json[];
  const total = at(all.body, "total_count") as number;
  assert.is(data.length, total);
  assert.is(
    total,
    await WorkspaceRow.count({
      where: { organizationId: (await WorkspaceRow.findByPk(defaultWorkspaceId))!.organizationId },
    }),
  );
  assert.is(data[0]!.id, defaultWorkspaceId, "the default workspace is the oldest");
  for (const ws of data) assertAllFields(ws);
  const times = data.map((ws) => Date.parse(String(ws.created_at)));
  assert.equal(
    times,
    [...times].sort((a, b) => a - b),
    "oldest first",
  );
  const ids = data.map((ws) => ws.id);
  const positions = created.map((ws) => ids.indexOf(ws.id));
  assert.ok(
    positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!)),
    "creation order",
  );

  const page = await listWorkspaces(gw, "?offset=1&limit=2");
  assert.is(page.status, 200, page.text);
  assert.equal(
    (at(page.body, "data") as Json[]).map((ws) => ws.id),
    ids.slice(1, 3),
  );
  assert.is(at(page.body, "total_count"), total, "total_count counts every workspace, not the page");
  const beyond = await listWorkspaces(gw, `?offset=${total}`);
  assert.equal(at(beyond.body, "data"), []);
  assert.is(at(beyond.body, "total_count"), total);

  for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?limit=abc"]) {
    assertError(await listWorkspaces(gw, query), 400, undefined, query);
  }
});

test("GET /workspaces lists only the caller's organization", async ({ gw }) => {
  const other = await seedOrganization("list-other-org");
  const theirs = await newWorkspace(gw, "list-theirs", {}, other.key);
  const mine = await listWorkspaces(gw);
  assert.not.ok((at(mine.body, "data") as Json[]).some((ws) => ws.id === theirs.id || ws.id === other.workspaceId));
  const their = await listWorkspaces(gw, "", other.key);
  assert.is(at(their.body, "total_count"), 2);
});

test(
  "budgets: list ordered daily, weekly, monthly, lifetime; " +
    "get one by interval; 404 for an interval without budget",
  async ({ gw }) => {
    const ws = await newWorkspace(gw, "budgets");
    const empty = await listBudgets(gw, ws.id as string);
    assert.is(empty.status, 200, empty.text);
    assert.equal(empty.body, { data: [] });
    assertError(await getBudget(gw, ws.id as string, "daily"), 404, /daily/);

    const limits: Record<string, number> = { lifetime: 100, daily: 2, monthly: 40, weekly: 10 };
    const ids: Record<string, string> = {};
    for (const [interval, limit] of Object.entries(limits)) {
      const res = await putBudget(gw, ws.slug as string, interval, limit);
      assert.is(res.status, 200, res.text);
      ids[interval] = at(res.body, "data", "id") as string;
    }

    const listed = await listBudgets(gw, ws.slug as string);
    assert.is(listed.status, 200, listed.text);
    const data = at(listed.body, "data") as Json[];
    assert.equal(
      data.map((b) => b.reset_interval),
      ["daily", "weekly", "monthly", "lifetime"],
    );
    for (const budget of data) {
      const interval = budget.reset_interval as string;
      assert.equal(Object.keys(budget).sort(), [
        "created_at",
        "id",
        "limit_usd",
        "reset_interval",
        "updated_at",
        "workspace_id",
      ]);
      assert.is(budget.id, ids[interval]);
      assert.match(String(budget.id), UUID);
      assert.is(budget.workspace_id, ws.id);
      assert.is(budget.limit_usd, limits[interval]);
      assert.match(String(budget.created_at), ISO);
      assert.is(budget.updated_at, null);

      for (const ref of [ws.id as string, ws.slug as string]) {
        const one = await getBudget(gw, ref, interval);
        assert.is(one.status, 200, one.text);
        assert.equal(at(one.body, "data"), budget, `${ref} ${interval}`);
      }
    }

    assert.is((await putBudget(gw, ws.id as string, "weekly", 12)).status, 200);
    const replaced = await getBudget(gw, ws.id as string, "weekly");
    assert.is(at(replaced.body, "data", "limit_usd"), 12);
    assert.match(String(at(replaced.body, "data", "updated_at")), ISO);

    assert.is((await call(gw.url, "DELETE", `${path(ws.id as string)}/budgets/monthly`, { key: gw.key })).status, 200);
    assertError(await getBudget(gw, ws.id as string, "monthly"), 404);
    assert.equal(
      (at((await listBudgets(gw, ws.id as string)).body, "data") as Json[]).map((b) => b.reset_interval),
      ["daily", "weekly", "lifetime"],
    );
  },
);

test("budgets: bad interval 400; unknown or another organization's workspace 404", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budgets-bad");
  for (const interval of ["yearly", "Daily"])
    assertError(await getBudget(gw, ws.id as string, interval), 400, /interval/, interval);
  const other = await seedOrganization("budgets-other-org");
  const theirs = await newWorkspace(gw, "budgets-theirs", {}, other.key);
  assert.is((await putBudget({ ...gw, key: other.key }, theirs.id as string, "daily", 5)).status, 200);
  for (const ref of [MISSING_UUID, "no-such-workspace", theirs.id as string, theirs.slug as string]) {
    assertError(await listBudgets(gw, ref), 404, undefined, `list ${ref}`);
    assertError(await getBudget(gw, ref, "daily"), 404, undefined, `get ${ref}`);
  }
});

test.run();

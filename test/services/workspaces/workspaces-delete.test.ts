import * as assert from "uvu/assert";
import { GuardrailRow } from "../../../server/platform/db/governance-models.js";
import { ApiKeyRow, WorkspaceBudgetRow } from "../../../server/platform/db/models.js";
import { call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { assertError, newWorkspace, plainKey, workspacesSuite } from "./workspaces-fixture.js";
import { deleteWorkspace, getWorkspace, MISSING_UUID, putBudget } from "./workspace-routes.js";

/** DELETE /workspaces/{ref}: what goes with a workspace, and the workspaces that cannot go. */
const test = workspacesSuite("workspaces: delete");

test("DELETE by UUID and by slug: {deleted: true}; budgets and guardrails go with the workspace", async ({
  gw,
  organizationId,
}) => {
  const byId = await newWorkspace(gw, "delete-id");
  assert.is((await putBudget(gw, byId.id as string, "monthly", 10)).status, 200);
  const guardrail = await GuardrailRow.create({ organizationId, workspaceId: byId.id as string, name: "goes too" });
  const res = await deleteWorkspace(gw, byId.id as string);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { deleted: true });
  assertError(await getWorkspace(gw, byId.id as string), 404);
  assert.is(await WorkspaceBudgetRow.count({ where: { workspaceId: byId.id as string } }), 0);
  assert.is(await GuardrailRow.findByPk(guardrail.id), null);

  const bySlug = await newWorkspace(gw, "delete-slug");
  const again = await deleteWorkspace(gw, bySlug.slug as string);
  assert.is(again.status, 200, again.text);
  assert.equal(again.body, { deleted: true });
  assertError(await getWorkspace(gw, bySlug.slug as string), 404);
  assertError(await deleteWorkspace(gw, bySlug.slug as string), 404, undefined, "a second delete");
  // The slug is free again.
  assert.is(
    (await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: "reborn", slug: bySlug.slug } }))
      .status,
    201,
  );
});

test("DELETE refuses (409) a workspace that still has keys, and the default workspace", async ({
  gw,
  defaultWorkspaceId,
}) => {
  const ws = await newWorkspace(gw, "delete-keys");
  const secret = await plainKey(gw, ws.id as string);
  assertError(await deleteWorkspace(gw, ws.id as string), 409, /API key/);
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key: secret })).status, 200, "the key still works");
  assert.is((await getWorkspace(gw, ws.id as string)).status, 200);

  await ApiKeyRow.destroy({ where: { workspaceId: ws.id as string } });
  assert.is((await deleteWorkspace(gw, ws.id as string)).status, 200, "deletable once its keys are gone");

  assertError(await deleteWorkspace(gw, defaultWorkspaceId), 409, /default workspace/);
  assertError(await deleteWorkspace(gw, "default"), 409, /default workspace/);
  assert.is((await getWorkspace(gw, defaultWorkspaceId)).status, 200);
});

test("DELETE: unknown 404; another organization's 404 by UUID and by slug, untouched", async ({ gw }) => {
  assertError(await deleteWorkspace(gw, MISSING_UUID), 404);
  assertError(await deleteWorkspace(gw, "no-such-workspace"), 404);
  const other = await seedOrganization("delete-other-org");
  const theirs = await newWorkspace(gw, "delete-theirs", {}, other.key);
  assertError(await deleteWorkspace(gw, theirs.id as string), 404, undefined, "by UUID");
  assertError(await deleteWorkspace(gw, theirs.slug as string), 404, undefined, "by slug");
  assert.is((await getWorkspace(gw, theirs.id as string, other.key)).status, 200);
});

test.run();

import type { Page } from "playwright-core";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import {
  chromiumMissing,
  fitsWidth,
  gone,
  goTo,
  openConsole,
  screenshot,
  signIn,
  type ConsoleSession,
} from "../support/browser.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call } from "../support/http.js";

/**
 * The console's Guardrails page (ui/src/pages/guardrails.tsx) in a real browser, checked against
 * the API: creating a guardrail, assigning it to a key (whose GET /key then shows its budget) and
 * to a member and unassigning them, editing it, the API's 409 message for deleting a workspace's
 * default guardrail, deleting one, and another workspace's guardrails.
 */
interface Context {
  gw: TestGateway;
  browser: ConsoleSession;
  page: Page;
  robot: { secret: string; hash: string };
  guardrailId?: string;
}
const test = suite<Context>("console: guardrails");

const NAME = "EU only";
const guardrailsTable = (page: Page) => page.getByRole("table", { name: /^Guardrails of / });
const rowOf = (page: Page, name: string) =>
  guardrailsTable(page)
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name, exact: true }) });
const assignments = (page: Page) => page.getByRole("region", { name: `Assignments of guardrail ${NAME}` });

if (!chromiumMissing(test, "console guardrails browser test")) {
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    const { url, key } = ctx.gw;
    const robot = await call(url, "POST", "/api/v1/keys", { key, body: { name: "ci-robot" } });
    assert.is(robot.status, 201);
    ctx.robot = { secret: String(at(robot.body, "key")), hash: String(at(robot.body, "data", "hash")) };
    assert.is(
      (
        await call(url, "POST", "/api/v1/organization/members", {
          key,
          body: { email: "ada@example.com", first_name: "Ada", last_name: "Lovelace" },
        })
      ).status,
      201,
    );
    ctx.browser = await openConsole(url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, key);
    await goTo(ctx.page, "Guardrails");
    await guardrailsTable(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.gw?.stop();
  });

  test("create a guardrail: it is listed with its policy", async (ctx) => {
    const { page, gw } = ctx;
    await page.getByRole("button", { name: "New guardrail" }).click();
    const form = page.getByRole("region", { name: "Create a guardrail in workspace Default" });
    await form.getByLabel("Name").fill(NAME);
    await form.getByLabel(/^Budget per key or member/).fill("5");
    await form.getByLabel("Budget resets").selectOption({ label: "Monthly" });
    await form.getByLabel(/^Allowed providers/).fill("mockanthropic, backup");
    await form
      .getByRole("group", { name: /Allowed data regions/ })
      .getByLabel("Europe")
      .check();
    await form.getByLabel("Zero data retention").selectOption({ label: "Enforce" });
    await screenshot(page, "guardrails-new");
    await form.getByRole("button", { name: "Create guardrail" }).click();
    const row = rowOf(page, NAME);
    await row.waitFor();
    await gone(form, "the form closes once created");
    const text = await row.innerText();
    assert.match(text, "$5.00 monthly per key or member");
    assert.match(text, "only mockanthropic, backup");
    assert.match(text, "regions europe; zero data retention; no paid training");

    const listed = await call(gw.url, "GET", "/api/v1/guardrails", { key: gw.key });
    const created = (at(listed.body, "data") as Array<Record<string, unknown>>).find((g) => g.name === NAME)!;
    assert.is(created.limit_usd, 5);
    assert.is(created.reset_interval, "monthly");
    assert.equal(created.allowed_providers, ["mockanthropic", "backup"]);
    assert.equal(created.allowed_data_regions, ["europe"]);
    assert.is(created.enforce_zdr, true);
    assert.is(created.allowed_models, null);
    ctx.guardrailId = String(created.id);
  });

  test("assign the guardrail to a key: the key's budgets then include it; unassign it", async ({
    page,
    gw,
    robot,
    guardrailId,
  }) => {
    await page.getByRole("button", { name: `Assignments of guardrail ${NAME}` }).click();
    const keys = assignments(page).getByRole("region", { name: `Keys of guardrail ${NAME}` });
    const picker = keys.getByLabel("Key to assign");
    await picker.locator("option", { hasText: "ci-robot" }).waitFor({ state: "attached" });
    await picker.selectOption({ label: `ci-robot (${await keyLabel(gw, robot.hash)})` });
    await keys.getByRole("button", { name: "Assign key" }).click();
    const table = keys.getByRole("table", { name: `Keys assigned to guardrail ${NAME}` });
    await table.getByRole("cell", { name: "ci-robot", exact: true }).waitFor();
    // Assigned keys leave the picker.
    await picker.locator("option", { hasText: "ci-robot" }).waitFor({ state: "detached" });

    const listed = await call(gw.url, "GET", `/api/v1/guardrails/${guardrailId}/assignments/keys`, { key: gw.key });
    assert.equal(
      (at(listed.body, "data") as Array<{ key_hash: string }>).map((a) => a.key_hash),
      [robot.hash],
    );
    const self = await call(gw.url, "GET", "/api/v1/key", { key: robot.secret });
    const budgets = at(self.body, "data", "budgets") as Array<{ guardrail_id: string | null; limit_usd: number }>;
    assert.ok(
      budgets.some((b) => b.guardrail_id === guardrailId && b.limit_usd === 5),
      JSON.stringify(budgets),
    );
    await screenshot(page, "guardrails-assignments");

    await keys.getByRole("button", { name: "Unassign key ci-robot" }).click();
    await keys.getByRole("button", { name: "Yes, unassign ci-robot" }).click();
    await table.getByText("No keys.").waitFor();
    const after = await call(gw.url, "GET", `/api/v1/guardrails/${guardrailId}/assignments/keys`, { key: gw.key });
    assert.is(at(after.body, "total_count"), 0);
  });

  test("assign the guardrail to a member, picked by name, and unassign them", async ({ page, gw, guardrailId }) => {
    const members = assignments(page).getByRole("region", { name: `Members of guardrail ${NAME}` });
    await members.getByLabel("Member to assign").selectOption({ label: "Ada Lovelace <ada@example.com>" });
    await members.getByRole("button", { name: "Assign member" }).click();
    const table = members.getByRole("table", { name: `Members assigned to guardrail ${NAME}` });
    await table.getByRole("cell", { name: "Ada Lovelace <ada@example.com>", exact: true }).waitFor();
    const listed = await call(gw.url, "GET", `/api/v1/guardrails/${guardrailId}/assignments/members`, { key: gw.key });
    assert.is(at(listed.body, "total_count"), 1);

    await members.getByRole("button", { name: "Unassign member Ada Lovelace <ada@example.com>" }).click();
    await members.getByRole("button", { name: "Yes, unassign Ada Lovelace <ada@example.com>" }).click();
    await table.getByText("No members.").waitFor();
    await assignments(page).getByRole("button", { name: "Close the assignments" }).click();
    assert.is(await assignments(page).count(), 0);
  });

  test("edit a guardrail: the form shows its policy; clearing the budget sends null", async ({
    page,
    gw,
    guardrailId,
  }) => {
    await page.getByRole("button", { name: `Edit guardrail ${NAME}` }).click();
    const form = page.getByRole("region", { name: `Edit guardrail ${NAME}` });
    assert.is(await form.getByLabel(/^Budget per key or member/).inputValue(), "5");
    assert.is(await form.getByLabel("Budget resets").inputValue(), "monthly");
    assert.is(await form.getByLabel(/^Allowed providers/).inputValue(), "mockanthropic, backup");
    assert.ok(await form.getByLabel("Europe").isChecked());
    assert.is(await form.getByLabel("Zero data retention").inputValue(), "true");
    await form.getByLabel(/^Budget per key or member/).fill("");
    await form.getByLabel("Budget resets").selectOption({ label: "Never (one-time budget)" });
    await form.getByLabel(/^Allowed models/).fill("mock/claude");
    await form.getByRole("button", { name: "Save guardrail" }).click();
    await rowOf(page, NAME)
      .filter({ hasText: "only mock/claude" })
      .getByRole("cell", { name: "None", exact: true })
      .waitFor();
    const res = await call(gw.url, "GET", `/api/v1/guardrails/${guardrailId}`, { key: gw.key });
    assert.is(at(res.body, "data", "limit_usd"), null);
    assert.is(at(res.body, "data", "reset_interval"), null);
    assert.equal(at(res.body, "data", "allowed_models"), ["mock/claude"]);
    assert.equal(at(res.body, "data", "allowed_providers"), ["mockanthropic", "backup"]);
  });

  test("deleting the workspace's default guardrail shows the API's 409 message; another is deleted", async ({
    page,
    gw,
    guardrailId,
    browser,
  }) => {
    const name = "Default guardrail";
    await guardrailsTable(page).getByRole("row").filter({ hasText: name }).getByText("workspace default").waitFor();
    await page.getByRole("button", { name: `Delete guardrail ${name}` }).click();
    await page.getByRole("button", { name: `Yes, delete ${name}` }).click();
    const alert = page.getByRole("alert").filter({ hasText: "The change was not made" });
    await alert.waitFor();
    const id = String(
      at(
        (await call(gw.url, "GET", "/api/v1/workspaces/default", { key: gw.key })).body,
        "data",
        "default_guardrail_id",
      ),
    );
    const refused = await call(gw.url, "DELETE", `/api/v1/guardrails/${id}`, { key: gw.key });
    assert.is(refused.status, 409);
    assert.match(await alert.innerText(), String(at(refused.body, "error", "message")));
    assert.match(await alert.innerText(), "is the default guardrail of workspace 'default'");
    await screenshot(page, "guardrails-409");
    await alert.getByRole("button", { name: "Dismiss the error" }).click();

    await page.getByRole("button", { name: `Delete guardrail ${NAME}` }).click();
    await page.getByRole("button", { name: `Yes, delete ${NAME}` }).click();
    await rowOf(page, NAME).waitFor({ state: "detached" });
    assert.is((await call(gw.url, "GET", `/api/v1/guardrails/${guardrailId}`, { key: gw.key })).status, 404);
    assert.equal(browser.problems, []);
  });

  test("another workspace's guardrails, chosen by name", async ({ page, gw }) => {
    const created = await call(gw.url, "POST", "/api/v1/workspaces", {
      key: gw.key,
      body: { name: "Research", slug: "research" },
    });
    const workspaceId = String(at(created.body, "data", "id"));
    assert.is(
      (
        await call(gw.url, "POST", "/api/v1/guardrails", {
          key: gw.key,
          body: { name: "Research cap", workspace_id: workspaceId, limit_usd: 1 },
        })
      ).status,
      201,
    );
    await page.reload();
    await guardrailsTable(page).waitFor();
    await page.getByRole("combobox", { name: /^Workspace/ }).selectOption({ label: "Research" });
    const table = page.getByRole("table", { name: "Guardrails of workspace Research" });
    await table.getByRole("cell", { name: "Research cap", exact: true }).waitFor();
    assert.match(await table.innerText(), "$1.00 once (lifetime) per key or member");
    await screenshot(page, "guardrails");

    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await fitsWidth(page), "no sideways scroll of the page");
    await screenshot(page, "guardrails-phone");
  });
}

async function keyLabel(gw: TestGateway, hash: string): Promise<string> {
  return String(at((await call(gw.url, "GET", `/api/v1/keys/${hash}`, { key: gw.key })).body, "data", "label"));
}

test.run();

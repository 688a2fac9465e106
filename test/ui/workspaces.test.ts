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
 * The console's Workspaces & budgets page (ui/src/pages/workspaces.tsx) in a real browser, checked
 * against the API: creating a workspace, setting a budget and seeing it listed with its limit,
 * the API's message when a budget breaks the order rule, deleting a budget, editing the
 * workspace's defaults, the API's 409 for deleting the default workspace, deleting one, paging.
 */
interface Context {
  gw: TestGateway;
  browser: ConsoleSession;
  page: Page;
}
const test = suite<Context>("console: workspaces");

const PAGE = "Workspaces & budgets";
const workspacesTable = (page: Page) => page.getByRole("table", { name: "Workspaces of the organization" });
const rowOf = (page: Page, name: string) =>
  workspacesTable(page)
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name, exact: true }) });
const budgetsTable = (page: Page) => page.getByRole("table", { name: "Budgets of workspace Research" });

if (!chromiumMissing(test, "console workspaces browser test")) {
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    ctx.browser = await openConsole(ctx.gw.url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, ctx.gw.key);
    await goTo(ctx.page, PAGE);
    await workspacesTable(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.gw?.stop();
  });

  test("create a workspace: it is listed, and its budgets open", async ({ page, gw }) => {
    const create = page.getByRole("region", { name: "Create a workspace" });
    await create.getByLabel("Name").fill("Research");
    await create.getByLabel(/^Slug/).fill("research");
    await create.getByLabel(/^Description/).fill("The research team");
    await create.getByRole("button", { name: "Create workspace" }).click();
    await rowOf(page, "Research").waitFor();
    assert.match(await rowOf(page, "Research").innerText(), "research");
    await page.getByRole("region", { name: "Budgets of workspace Research" }).waitFor();
    assert.match(await budgetsTable(page).innerText(), "No budgets");
    const res = await call(gw.url, "GET", "/api/v1/workspaces/research", { key: gw.key });
    assert.is(res.status, 200);
    assert.is(at(res.body, "data", "description"), "The research team");
  });

  test(
    "set a workspace budget: it is listed with its limit; " + "the API's order rule shows its message; delete it",
    async ({ page, gw }) => {
      const budgets = page.getByRole("region", { name: "Budgets of workspace Research" });
      await budgets.getByLabel("Interval").selectOption({ label: "Monthly" });
      await budgets.getByLabel("Limit (USD)").fill("50");
      await budgets.getByRole("button", { name: "Set budget" }).click();
      const monthly = budgetsTable(page).getByRole("row").filter({ hasText: "Monthly" });
      await monthly.waitFor();
      assert.match(await monthly.innerText(), /Monthly\s+\$50\.00/);
      let listed = await call(gw.url, "GET", "/api/v1/workspaces/research/budgets", { key: gw.key });
      assert.equal(
        (at(listed.body, "data") as Array<{ reset_interval: string; limit_usd: number }>).map((b) => [
          b.reset_interval,
          b.limit_usd,
        ]),
        [["monthly", 50]],
      );

      // Setting it again replaces the limit of that interval.
      await budgets.getByLabel("Interval").selectOption({ label: "Monthly" });
      await budgets.getByLabel("Limit (USD)").fill("40");
      await budgets.getByRole("button", { name: "Set budget" }).click();
      await budgetsTable(page).getByRole("row").filter({ hasText: "$40.00" }).waitFor();
      assert.is(await budgetsTable(page).getByRole("row").filter({ hasText: "Monthly" }).count(), 1);

      // A daily budget above the monthly one breaks the API's rule: its message is shown.
      await budgets.getByLabel("Interval").selectOption({ label: "Daily" });
      await budgets.getByLabel("Limit (USD)").fill("60");
      await budgets.getByRole("button", { name: "Set budget" }).click();
      const alert = budgets.getByRole("alert").filter({ hasText: "The budget was not changed" });
      await alert.waitFor();
      const refused = await call(gw.url, "PUT", "/api/v1/workspaces/research/budgets/daily", {
        key: gw.key,
        body: { limit_usd: 60 },
      });
      assert.is(refused.status, 400);
      assert.match(await alert.innerText(), String(at(refused.body, "error", "message")));
      await alert.getByRole("button", { name: "Dismiss the error" }).click();
      await screenshot(page, "workspaces-budgets");

      await budgets.getByRole("button", { name: "Delete the monthly budget of workspace Research" }).click();
      await budgets.getByRole("button", { name: "Yes, delete the monthly budget" }).click();
      await budgetsTable(page).getByText("No budgets").waitFor();
      listed = await call(gw.url, "GET", "/api/v1/workspaces/research/budgets", { key: gw.key });
      assert.equal(at(listed.body, "data"), []);
      await budgets.getByRole("button", { name: "Close the budgets" }).click();
      await gone(budgets, "the budgets close");
    },
  );

  test("edit a workspace's defaults: the form is filled from the API, the changes are sent", async ({ page, gw }) => {
    await page.getByRole("button", { name: "Edit workspace Research" }).click();
    let form = page.getByRole("region", { name: "Edit workspace Research" });
    await form.getByLabel("Default text model").fill("mock/chat");
    await form.getByLabel("Default provider sort").selectOption({ label: "Latency" });
    await form.getByRole("group", { name: "Disabled server tools" }).getByLabel("web_search").check();
    await form.getByLabel("BYOK spend counts against budgets").check();
    await screenshot(page, "workspaces-edit");
    await form.getByRole("button", { name: "Save workspace" }).click();
    await rowOf(page, "Research")
      .filter({
        hasText: "text model mock/chat; providers by latency; 1 server tool(s) disabled; BYOK counts in budgets",
      })
      .waitFor();
    const res = await call(gw.url, "GET", "/api/v1/workspaces/research", { key: gw.key });
    assert.is(at(res.body, "data", "default_text_model"), "mock/chat");
    assert.is(at(res.body, "data", "default_provider_sort"), "latency");
    assert.equal(at(res.body, "data", "disabled_server_tools"), ["svc:web_search"]);
    assert.is(at(res.body, "data", "include_byok_in_budgets"), true);

    // Opened again, the form shows what the API holds; clearing a field sends null.
    await page.getByRole("button", { name: "Edit workspace Research" }).click();
    form = page.getByRole("region", { name: "Edit workspace Research" });
    assert.is(await form.getByLabel("Default provider sort").inputValue(), "latency");
    assert.ok(await form.getByLabel("web_search").isChecked());
    assert.is(
      await form.getByLabel("Default guardrail").inputValue(),
      String(at(res.body, "data", "default_guardrail_id")),
    );
    await form.getByLabel("Default text model").fill("");
    await form.getByLabel("Name").fill("Research lab");
    await form.getByRole("button", { name: "Save workspace" }).click();
    await rowOf(page, "Research lab").waitFor();
    const after = await call(gw.url, "GET", "/api/v1/workspaces/research", { key: gw.key });
    assert.is(at(after.body, "data", "default_text_model"), null);
    assert.is(at(after.body, "data", "name"), "Research lab");
  });

  test("deleting the default workspace shows the API's 409; another is deleted after confirming", async ({
    page,
    gw,
    browser,
  }) => {
    await page.getByRole("button", { name: "Delete workspace Default" }).click();
    await page.getByRole("button", { name: "Yes, delete Default" }).click();
    const alert = page.getByRole("alert").filter({ hasText: "The change was not made" });
    await alert.waitFor();
    assert.match(await alert.innerText(), "The organization's default workspace cannot be deleted");
    await alert.getByRole("button", { name: "Dismiss the error" }).click();

    await page.getByRole("button", { name: "Delete workspace Research lab" }).click();
    await page.getByRole("button", { name: "Yes, delete Research lab" }).click();
    await rowOf(page, "Research lab").waitFor({ state: "detached" });
    assert.is((await call(gw.url, "GET", "/api/v1/workspaces/research", { key: gw.key })).status, 404);
    assert.equal(browser.problems, []);
  });

  test("the list pages by 20", async ({ page, gw }) => {
    for (let i = 1; i <= 20; i++) {
      const res = await call(gw.url, "POST", "/api/v1/workspaces", {
        key: gw.key,
        body: { name: `Team ${String(i).padStart(2, "0")}`, slug: `team-${i}` },
      });
      assert.is(res.status, 201, res.text);
    }
    await page.getByRole("button", { name: "Refresh the workspaces" }).click();
    const pager = page.getByRole("navigation", { name: "Pages of Workspaces of the organization" });
    await pager.waitFor();
    assert.is(await workspacesTable(page).locator("tbody tr").count(), 20);
    await screenshot(page, "workspaces");
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.getByText("Rows 21–21").waitFor();
    // Oldest first: the last page holds the newest.
    await rowOf(page, "Team 20").waitFor();
  });

  test("at phone width the page fits the screen", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Previous page" }).click();
    await page.getByRole("button", { name: "Budgets of workspace Default" }).click();
    await page.getByRole("region", { name: "Budgets of workspace Default" }).waitFor();
    assert.ok(await fitsWidth(page), "no sideways scroll of the page");
    await screenshot(page, "workspaces-phone");
  });
}

test.run();

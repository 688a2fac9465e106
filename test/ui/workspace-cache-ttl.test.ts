import type { Page } from "playwright-core";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { chromiumMissing, goTo, openConsole, screenshot, signIn, type ConsoleSession } from "../support/browser.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call } from "../support/http.js";

/**
 * The workspace form's response cache TTL (ui/src/pages/workspaces.tsx) in a real browser: set in
 * the form and saved, `GET /workspaces` shows it as `svc_cache_ttl_seconds`; the form shows what
 * the API holds, and emptying the field removes it (null).
 */
interface Context {
  gw: TestGateway;
  browser: ConsoleSession;
  page: Page;
}
const test = suite<Context>("console: a workspace's response cache TTL");

const workspacesTable = (page: Page) => page.getByRole("table", { name: "Workspaces of the organization" });

/** `svc_cache_ttl_seconds` of the workspace `slug` as GET /workspaces lists it. */
async function listedTtl(gw: TestGateway, slug: string): Promise<unknown> {
  const res = await call(gw.url, "GET", "/api/v1/workspaces", { key: gw.key });
  assert.is(res.status, 200, res.text);
  const workspace = (at(res.body, "data") as Array<{ slug: string; svc_cache_ttl_seconds: unknown }>).find(
    (w) => w.slug === slug,
  );
  assert.ok(workspace, `workspace ${slug} is listed`);
  return workspace.svc_cache_ttl_seconds;
}

if (!chromiumMissing(test, "console workspace cache TTL browser test")) {
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    const created = await call(ctx.gw.url, "POST", "/api/v1/workspaces", {
      key: ctx.gw.key,
      body: { name: "Evaluations", slug: "evaluations" },
    });
    assert.is(created.status, 201, created.text);
    ctx.browser = await openConsole(ctx.gw.url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, ctx.gw.key);
    await goTo(ctx.page, "Workspaces & budgets");
    await workspacesTable(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.gw?.stop();
  });

  test("set the TTL in the form and save: GET /workspaces shows it; emptied, it is removed", async ({
    page,
    gw,
    browser,
  }) => {
    assert.is(await listedTtl(gw, "evaluations"), null);
    await page.getByRole("button", { name: "Edit workspace Evaluations" }).click();
    let form = page.getByRole("region", { name: "Edit workspace Evaluations" });
    const ttl = () => form.getByLabel(/^Response cache TTL/);
    assert.is(await ttl().inputValue(), "");
    await ttl().fill("900");
    await screenshot(page, "workspaces-cache-ttl");
    await form.getByRole("button", { name: "Save workspace" }).click();
    await workspacesTable(page).getByRole("row").filter({ hasText: "answers cached 900 s" }).waitFor();
    assert.is(await listedTtl(gw, "evaluations"), 900);

    // Opened again, the form shows what the API holds; emptied and saved, the TTL is removed.
    await page.getByRole("button", { name: "Edit workspace Evaluations" }).click();
    form = page.getByRole("region", { name: "Edit workspace Evaluations" });
    assert.is(await ttl().inputValue(), "900");
    await ttl().fill("");
    await form.getByRole("button", { name: "Save workspace" }).click();
    await form.waitFor({ state: "detached" });
    assert.is(await listedTtl(gw, "evaluations"), null);
    assert.equal(browser.problems, []);
  });
}

test.run();

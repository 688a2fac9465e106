import type { Page } from "playwright-core";
import * as assert from "uvu/assert";
import {
  chromiumMissing,
  gone,
  goTo,
  openConsole,
  screenshot,
  signIn,
  type ConsoleSession,
} from "../support/browser.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call } from "../support/http.js";
import { suite } from "../support/suite.js";

/**
 * The requests and tokens per minute of keys and workspaces (`svc_rate_limit`) in the console's
 * forms (ui/src/components/rate-limit-fields.tsx), in a real browser, checked against the API:
 * set when a key is created and in a key's limit form, in a workspace's form; the tables show
 * them; emptied, they are removed (null).
 */
interface Context {
  gw: TestGateway;
  browser: ConsoleSession;
  page: Page;
}
const test = suite<Context>("console: rate limits of keys and workspaces");

const NAME = "paced-robot";
const keysTable = (page: Page) => page.getByRole("table", { name: "Keys of the organization" });
const workspacesTable = (page: Page) => page.getByRole("table", { name: "Workspaces of the organization" });
const rowOf = (page: Page, name: string) =>
  keysTable(page)
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name, exact: true }) });

async function keyNamed(gw: TestGateway, name: string): Promise<Record<string, unknown>> {
  const res = await call(gw.url, "GET", "/api/v1/keys", { key: gw.key });
  const key = (at(res.body, "data") as Array<Record<string, unknown>>).find((k) => k.name === name);
  assert.ok(key, `key ${name} is listed`);
  return key;
}

if (!chromiumMissing(test, "console rate limits browser test")) {
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    const created = await call(ctx.gw.url, "POST", "/api/v1/workspaces", {
      key: ctx.gw.key,
      body: { name: "Batch jobs", slug: "batch-jobs" },
    });
    assert.is(created.status, 201, created.text);
    ctx.browser = await openConsole(ctx.gw.url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, ctx.gw.key);
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.gw?.stop();
  });

  test("a key created with limits shows them; its limit form changes them, and emptied they are removed", async ({
    page,
    gw,
    browser,
  }) => {
    await goTo(page, "Keys");
    await keysTable(page).waitFor();
    const create = page.getByRole("region", { name: "Create a key" });
    await create.getByLabel("Name").fill(NAME);
    await create.getByLabel(/^Requests per minute/).fill("30");
    await create.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("button", { name: "I have saved the key" }).click();
    await rowOf(page, NAME).filter({ hasText: "30 requests/min" }).waitFor();
    assert.equal((await keyNamed(gw, NAME)).svc_rate_limit, { requests_per_minute: 30, tokens_per_minute: null });

    await page.getByRole("button", { name: `Set the limit of key ${NAME}` }).click();
    const form = page.getByRole("region", { name: `Limit of key ${NAME}` });
    assert.is(await form.getByLabel(/^Requests per minute/).inputValue(), "30", "the form opens on the stored limits");
    await form.getByLabel(/^Tokens per minute/).fill("40000");
    await screenshot(page, "keys-rate-limits");
    await form.getByRole("button", { name: "Save limit" }).click();
    await rowOf(page, NAME).filter({ hasText: "30 requests/min, 40,000 tokens/min" }).waitFor();
    await gone(form, "the form closes once saved");
    assert.equal((await keyNamed(gw, NAME)).svc_rate_limit, { requests_per_minute: 30, tokens_per_minute: 40_000 });

    await page.getByRole("button", { name: `Set the limit of key ${NAME}` }).click();
    await form.getByLabel(/^Requests per minute/).fill("");
    await form.getByLabel(/^Tokens per minute/).fill("");
    await form.getByRole("button", { name: "Save limit" }).click();
    await rowOf(page, NAME).filter({ hasText: "Default" }).waitFor();
    assert.is((await keyNamed(gw, NAME)).svc_rate_limit, null);
    assert.equal(browser.problems, []);
  });

  test("a workspace's limits are set in its form, listed with its defaults, and removed when emptied", async ({
    page,
    gw,
    browser,
  }) => {
    await goTo(page, "Workspaces & budgets");
    await workspacesTable(page).waitFor();
    await page.getByRole("button", { name: "Edit workspace Batch jobs" }).click();
    let form = page.getByRole("region", { name: "Edit workspace Batch jobs" });
    await form.getByLabel(/^Requests per minute/).fill("5");
    await form.getByLabel(/^Tokens per minute/).fill("100000");
    await form.getByRole("button", { name: "Save workspace" }).click();
    await workspacesTable(page)
      .getByRole("row")
      .filter({ hasText: "at most 5 requests/min, 100,000 tokens/min" })
      .waitFor();
    const listed = async () => {
      const res = await call(gw.url, "GET", "/api/v1/workspaces/batch-jobs", { key: gw.key });
      return at(res.body, "data", "svc_rate_limit");
    };
    assert.equal(await listed(), { requests_per_minute: 5, tokens_per_minute: 100_000 });

    await page.getByRole("button", { name: "Edit workspace Batch jobs" }).click();
    form = page.getByRole("region", { name: "Edit workspace Batch jobs" });
    assert.is(await form.getByLabel(/^Tokens per minute/).inputValue(), "100000", "the form shows what the API holds");
    await form.getByLabel(/^Requests per minute/).fill("");
    await form.getByLabel(/^Tokens per minute/).fill("");
    await form.getByRole("button", { name: "Save workspace" }).click();
    await form.waitFor({ state: "detached" });
    assert.is(await listed(), null);
    assert.equal(browser.problems, []);
  });
}

test.run();

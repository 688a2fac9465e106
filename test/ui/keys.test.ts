import type { Page } from "playwright-core";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import {
  chromiumMissing,
  clipboardText,
  gone,
  goTo,
  openConsole,
  screenshot,
  sessionStorageOf,
  signIn,
  type ConsoleSession,
} from "../support/browser.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call } from "../support/http.js";

/**
 * The console's Keys page (ui/src/pages/keys.tsx) in a real browser, checked against the API:
 * creating a key shows its secret once (copyable, gone after a reload), disabling and enabling,
 * the credit limit and its reset interval, deleting after a confirmation, the API's message when
 * a change fails, and paging through the list.
 */
interface Context {
  gw: TestGateway;
  browser: ConsoleSession;
  page: Page;
  /** The key the page created, once it has. */
  created?: { secret: string; hash: string };
}
const test = suite<Context>("console: keys");

const NAME = "ci-robot";
const keysTable = (page: Page) => page.getByRole("table", { name: "Keys of the organization" });
const rowOf = (page: Page, name: string) =>
  keysTable(page)
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name, exact: true }) });

if (!chromiumMissing(test, "console keys browser test")) {
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    ctx.browser = await openConsole(ctx.gw.url);
    ctx.page = ctx.browser.page;
    await ctx.browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: ctx.gw.url });
    await signIn(ctx.page, ctx.gw.key);
    await goTo(ctx.page, "Keys");
    await keysTable(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.gw?.stop();
  });

  test("creating a key shows its secret once, with a copy button; after a reload it is gone", async (ctx) => {
    const { page, gw } = ctx;
    const create = page.getByRole("region", { name: "Create a key" });
    await create.getByLabel("Name").fill(NAME);
    await create.getByLabel(/Credit limit/).fill("10");
    await create.getByLabel("Limit resets").selectOption({ label: "Monthly" });
    await create.getByRole("button", { name: "Create key" }).click();

    const shown = page.getByRole("region", { name: `New key ${NAME}` });
    await shown.waitFor();
    const secret = await shown.getByRole("textbox", { name: "New key secret" }).inputValue();
    assert.match(secret, /^sk-gw-v1-[0-9a-f]{64}$/);
    await shown.getByRole("button", { name: "Copy the key" }).click();
    await shown.getByRole("status").filter({ hasText: "Copied to the clipboard." }).waitFor();
    assert.is(await clipboardText(page), secret);

    // The secret is a working key, and the row is the API's.
    const self = await call(gw.url, "GET", "/api/v1/key", { key: secret });
    assert.is(self.status, 200);
    const row = rowOf(page, NAME);
    await row.waitFor();
    assert.match(await row.innerText(), String(at(self.body, "data", "label")));
    assert.match(await row.innerText(), /Enabled\s+\$10\.00 left of \$10\.00, resets monthly/);
    await screenshot(page, "keys-new-secret");

    await page.reload();
    await keysTable(page).waitFor();
    await rowOf(page, NAME).waitFor();
    assert.is(await page.getByRole("textbox", { name: "New key secret" }).count(), 0);
    assert.not.match(await page.content(), secret);
    assert.not.match(JSON.stringify(await sessionStorageOf(page)), secret);
    ctx.created = { secret, hash: (await listKeys(gw)).find((k) => k.name === NAME)!.hash };
  });

  test("disable and enable a key: the API refuses it while disabled", async ({ page, gw, created }) => {
    await page.getByRole("button", { name: `Disable key ${NAME}` }).click();
    await rowOf(page, NAME).filter({ hasText: "Disabled" }).waitFor();
    const refused = await call(gw.url, "GET", "/api/v1/key", { key: created!.secret });
    assert.is(refused.status, 401);
    assert.is(at(refused.body, "error", "message"), "API key is disabled");
    await page.getByRole("button", { name: `Enable key ${NAME}` }).click();
    await rowOf(page, NAME).filter({ hasText: "Enabled" }).waitFor();
    assert.is((await call(gw.url, "GET", "/api/v1/key", { key: created!.secret })).status, 200);
  });

  test("set the credit limit and its reset interval, then clear them", async ({ page, gw, created }) => {
    await page.getByRole("button", { name: `Set the limit of key ${NAME}` }).click();
    const form = page.getByRole("region", { name: `Limit of key ${NAME}` });
    assert.is(await form.getByLabel(/Credit limit/).inputValue(), "10");
    assert.is(await form.getByLabel("Limit resets").inputValue(), "monthly", "the form opens on the stored interval");
    await form.getByLabel(/Credit limit/).fill("2.5");
    await form.getByLabel("Limit resets").selectOption({ label: "Weekly" });
    await form.getByRole("button", { name: "Save limit" }).click();
    await rowOf(page, NAME).filter({ hasText: "$2.50 left of $2.50, resets weekly" }).waitFor();
    await gone(form, "the form closes once saved");
    let key = await call(gw.url, "GET", `/api/v1/keys/${created!.hash}`, { key: gw.key });
    assert.is(at(key.body, "data", "limit"), 2.5);
    assert.is(at(key.body, "data", "limit_reset"), "weekly");

    await page.getByRole("button", { name: `Set the limit of key ${NAME}` }).click();
    assert.is(
      await form.getByLabel("Limit resets").inputValue(),
      "weekly",
      "saving without touching the interval keeps it",
    );
    await form.getByLabel(/Credit limit/).fill("");
    await form.getByLabel("Limit resets").selectOption({ label: "Never" });
    await form.getByRole("button", { name: "Save limit" }).click();
    await rowOf(page, NAME).getByRole("cell", { name: "None", exact: true }).waitFor();
    key = await call(gw.url, "GET", `/api/v1/keys/${created!.hash}`, { key: gw.key });
    assert.is(at(key.body, "data", "limit"), null);
    assert.is(at(key.body, "data", "limit_reset"), null);
  });

  test("a change the API refuses shows the API's message", async ({ page, gw }) => {
    const doomed = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "doomed" } });
    await page.getByRole("button", { name: "Refresh the keys" }).click();
    await rowOf(page, "doomed").waitFor();
    // Deleted behind the page's back: the page's next change to it gets the API's 404.
    const hash = String(at(doomed.body, "data", "hash"));
    assert.is((await call(gw.url, "DELETE", `/api/v1/keys/${hash}`, { key: gw.key })).status, 200);
    await page.getByRole("button", { name: "Disable key doomed" }).click();
    const alert = page.getByRole("alert").filter({ hasText: "The change was not made" });
    await alert.waitFor();
    assert.match(await alert.innerText(), "API key not found");
    await alert.getByRole("button", { name: "Dismiss the error" }).click();
    await gone(alert, "the error is dismissed");
  });

  test("delete a key after confirming; cancelling keeps it", async ({ page, gw, created }) => {
    await page.getByRole("button", { name: `Delete key ${NAME}` }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    assert.is(await rowOf(page, NAME).count(), 1);
    await page.getByRole("button", { name: `Delete key ${NAME}` }).click();
    const confirm = page.getByRole("button", { name: `Yes, delete ${NAME}` });
    assert.ok(
      await confirm.evaluate((button) => button.ownerDocument.activeElement === button),
      "the confirmation takes the focus",
    );
    await confirm.click();
    await rowOf(page, NAME).waitFor({ state: "detached" });
    assert.is((await call(gw.url, "GET", `/api/v1/keys/${created!.hash}`, { key: gw.key })).status, 404);
    assert.is((await call(gw.url, "GET", "/api/v1/key", { key: created!.secret })).status, 401);
  });

  test("the list pages by 20", async ({ page, gw, browser }) => {
    for (let i = 1; i <= 21; i++) {
      const res = await call(gw.url, "POST", "/api/v1/keys", {
        key: gw.key,
        body: { name: `key-${String(i).padStart(2, "0")}` },
      });
      assert.is(res.status, 201);
    }
    await page.reload();
    const pager = page.getByRole("navigation", { name: "Pages of Keys of the organization" });
    await pager.waitFor();
    assert.is(await keysTable(page).locator("tbody tr").count(), 20);
    assert.match(await pager.innerText(), "Rows 1–20");
    assert.ok(await pager.getByRole("button", { name: "Previous page" }).isDisabled());
    await screenshot(page, "keys");
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.getByText("Rows 21–22").waitFor();
    assert.is(await keysTable(page).locator("tbody tr").count(), 2);
    assert.ok(await pager.getByRole("button", { name: "Next page" }).isDisabled());
    // Newest first: the last page holds the oldest keys.
    assert.match(await keysTable(page).innerText(), "Bootstrap management key");
    await pager.getByRole("button", { name: "Previous page" }).click();
    await pager.getByText("Rows 1–20").waitFor();
    assert.equal(browser.problems, []);
  });
}

async function listKeys(gw: TestGateway): Promise<Array<{ name: string; hash: string }>> {
  const res = await call(gw.url, "GET", "/api/v1/keys?include_disabled=true", { key: gw.key });
  return at(res.body, "data") as Array<{ name: string; hash: string }>;
}

test.run();

import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import {
  chromiumMissing,
  fitsWidth,
  goTo,
  openConsole,
  screenshot,
  sessionStorageOf,
  signIn,
} from "../support/browser.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call } from "../support/http.js";

/**
 * Signing in to the web console (ui/src/sign-in.tsx, app.tsx) in a real browser: a pasted key is
 * checked with GET /key and kept in the tab's sessionStorage only; a refused key shows the API's
 * message; sign-out forgets the key; a non-management key gets its read-only views and the API's
 * refusal where it may not look; at phone width the navigation folds behind a menu button.
 */
const test = suite<{ gw: TestGateway }>("console: sign-in");

if (!chromiumMissing(test, "console sign-in browser test")) {
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
  });
  test.after(async (ctx) => ctx.gw?.stop());

  test("a wrong key shows the API's error message and is not kept", async ({ gw }) => {
    const browser = await openConsole(gw.url);
    try {
      const { page } = browser;
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await screenshot(page, "sign-in");
      const wrong = `sk-gw-v1-${"0".repeat(64)}`;
      await page.getByLabel("API key").fill(wrong);
      await page.getByRole("button", { name: "Sign in" }).click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      // The API's own message (server/platform/rpc/auth.ts), as GET /key answers it.
      const expected = at((await call(gw.url, "GET", "/api/v1/key", { key: wrong })).body, "error", "message");
      assert.is(expected, "Invalid API key");
      assert.match(await alert.innerText(), "Invalid API key");
      assert.equal(await sessionStorageOf(page), {});
      assert.not.match(page.url(), wrong);
      assert.is(await page.getByRole("navigation", { name: "Console" }).count(), 0);
      assert.equal(browser.problems, []);
    } finally {
      await browser.close();
    }
  });

  test("a pasted key signs in, stays in this tab across a reload, never in the URL; sign-out forgets it", async ({
    gw,
  }) => {
    const browser = await openConsole(gw.url);
    try {
      const { page } = browser;
      await signIn(page, gw.key);
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      assert.match(page.url(), /\/ui\/#\/overview$/);
      const label = String(at((await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body, "data", "label"));
      assert.match(await page.getByRole("banner").innerText(), label);
      assert.match(await page.getByRole("banner").innerText(), "management key");
      assert.equal(Object.values(await sessionStorageOf(page)), [gw.key]);
      assert.is(await page.locator("input[type=password]").count(), 0, "the field is gone with the key typed in it");

      await page.reload();
      await page.getByRole("navigation", { name: "Console" }).waitFor();
      await goTo(page, "Keys");
      assert.match(page.url(), /#\/keys$/);
      assert.not.match(page.url(), gw.key);

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      assert.equal(await sessionStorageOf(page), {});
      await page.reload();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      assert.equal(browser.problems, []);
    } finally {
      await browser.close();
    }
  });

  test("a non-management key sees its budgets, and the API's refusal where it may not look", async ({ gw }) => {
    const created = await call(gw.url, "POST", "/api/v1/keys", {
      key: gw.key,
      body: { name: "reader", limit: 5, limit_reset: "weekly" },
    });
    assert.is(created.status, 201);
    const browser = await openConsole(gw.url);
    try {
      const { page } = browser;
      await signIn(page, String(at(created.body, "key")));
      assert.match(await page.getByRole("banner").innerText(), /\bkey\b/);
      assert.not.match(await page.getByRole("banner").innerText(), "management key");
      const refusal = page.getByRole("alert").filter({ hasText: "Spend over time" });
      await refusal.waitFor();
      assert.match(await refusal.innerText(), "Only management keys can perform this operation");
      const budgets = page.getByRole("table", { name: "Budgets that apply to this key" });
      await budgets.waitFor();
      assert.match(await budgets.innerText(), /key's weekly credit limit\s+weekly\s+\$5\.00/);
      await screenshot(page, "overview-non-management");

      await goTo(page, "Keys");
      assert.match(
        await page.getByRole("alert").filter({ hasText: "The keys could not be listed" }).innerText(),
        "Only management keys can perform this operation",
      );
      assert.equal(browser.problems, []);
    } finally {
      await browser.close();
    }
  });

  test("at phone width the navigation folds behind the menu button", async ({ gw }) => {
    const browser = await openConsole(gw.url, { viewport: { width: 390, height: 844 } });
    try {
      const { page } = browser;
      await signIn(page, gw.key);
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      const menu = page.getByRole("button", { name: "Menu" });
      assert.is(await menu.getAttribute("aria-expanded"), "false");
      assert.not.ok(await page.getByRole("link", { name: "Keys" }).isVisible());
      await page.getByRole("table", { name: "Budgets that apply to this key" }).waitFor();
      await screenshot(page, "overview-phone");
      await menu.click();
      assert.is(await menu.getAttribute("aria-expanded"), "true");
      await page.getByRole("link", { name: "Keys" }).click();
      await page.getByRole("heading", { level: 1, name: "Keys" }).waitFor();
      assert.is(
        await menu.getAttribute("aria-expanded"),
        "false",
        "the menu closes in the render that shows the next page",
      );
      // Nothing wider than the screen: tables scroll inside their frame.
      assert.ok(await fitsWidth(page), "no sideways scroll of the page");
      const table = page.getByRole("table", { name: "Keys of the organization" });
      await table.waitFor();
      assert.ok(
        await table.evaluate((t) => t.parentElement!.scrollWidth <= t.parentElement!.clientWidth),
        "the rows fit the screen as cards",
      );
      await screenshot(page, "keys-phone");
      assert.equal(browser.problems, []);
    } finally {
      await browser.close();
    }
  });
}

test.run();

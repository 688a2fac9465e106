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
import { at, call } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";

/**
 * The console's Models page (ui/src/pages/models.tsx) in a real browser over the mock catalog
 * (test/support/inference-gateway.ts): the catalog with prices per million tokens and context,
 * every modality on request, the filter box, and a model's endpoints with their prices and the
 * latency and uptime of a real call through the mock upstream. A key that is not a management
 * key sees it too.
 */
interface Context {
  env: InferenceGateway;
  browser: ConsoleSession;
  page: Page;
}
const test = suite<Context>("console: models");

const catalog = (page: Page) => page.getByRole("table", { name: "Models of the catalog" });
const rowOf = (page: Page, id: string) => catalog(page).getByRole("row").filter({ hasText: id });

if (!chromiumMissing(test, "console models browser test")) {
  test.before(async (ctx) => {
    ctx.env = await startInferenceGateway();
    const { url, key } = ctx.env.gw;
    // A plain key: the catalog needs no management key. Its call through the cheapest endpoint
    // gives that endpoint stats.
    const created = await call(url, "POST", "/api/v1/keys", { key, body: { name: "reader" } });
    const reader = String(at(created.body, "key"));
    const chat = await call(url, "POST", "/api/v1/chat/completions", {
      key: reader,
      body: { model: "mock/chat", messages: [{ role: "user", content: "Hello" }] },
    });
    assert.is(chat.status, 200, chat.text);
    ctx.browser = await openConsole(url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, reader);
    await goTo(ctx.page, "Models");
    await catalog(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.env?.stop();
  });

  test("the catalog lists the mock models with prices per million tokens and context", async ({ page, env }) => {
    const listed = await call(env.gw.url, "GET", "/api/v1/models");
    const ids = (at(listed.body, "data") as Array<{ id: string }>).map((m) => m.id);
    assert.equal(ids.sort(), ["mock/byok", "mock/chat", "mock/claude", "mock/free"]);
    await rowOf(page, "mock/chat").waitFor();
    assert.is(await catalog(page).locator("tbody tr").count(), ids.length);
    assert.match(
      await rowOf(page, "mock/chat").innerText(),
      /Mock: Chat\s+mock\/chat\s+32,000\s+\$1\.00\s+\$2\.00\s+text->text/,
    );
    assert.match(await rowOf(page, "mock/claude").innerText(), /200,000\s+\$5\.00\s+\$10\.00/);
    assert.match(await rowOf(page, "mock/free").innerText(), /Free\s+Free/);
    assert.is(await rowOf(page, "mock/embed").count(), 0, "embedding models only when asked for");
    assert.match(await page.getByRole("status").filter({ hasText: "models" }).innerText(), "4 of 4 models");

    await page.getByLabel("Show").selectOption({ label: "All models (embeddings, images, audio…)" });
    await rowOf(page, "mock/embed").waitFor();
    assert.match(await rowOf(page, "mock/embed").innerText(), /8,000\s+\$0\.10\s+Free\s+text->embeddings/);
  });

  test("the filter box narrows the list by name, id or modality", async ({ page }) => {
    const filter = page.getByRole("searchbox", { name: "Filter models" });
    await filter.fill("claude");
    await page.getByRole("status").filter({ hasText: "1 of 5 models" }).waitFor();
    assert.is(await catalog(page).locator("tbody tr").count(), 1);
    await rowOf(page, "mock/claude").waitFor();
    await filter.fill("embeddings");
    await rowOf(page, "mock/embed").waitFor();
    assert.is(await catalog(page).locator("tbody tr").count(), 1);
    await filter.fill("no such model");
    await catalog(page).getByText("No model matches the filter.").waitFor();
    await filter.fill("");
    await page.getByRole("status").filter({ hasText: "5 of 5 models" }).waitFor();
  });

  test("a model's details list its endpoints with prices, limits and the stats of recent calls", async ({
    page,
    browser,
  }) => {
    await page.getByRole("button", { name: "Details of model mock/chat" }).click();
    const details = page.getByRole("region", { name: "Model mock/chat" });
    const endpoints = details.getByRole("table", { name: "Endpoints of mock/chat" });
    await endpoints.waitFor();
    const row = (provider: string) =>
      endpoints.getByRole("row").filter({ has: page.getByRole("cell", { name: provider, exact: true }) });
    assert.is(await endpoints.locator("tbody tr").count(), 3);
    // The call went to the cheapest endpoint: it has latency and uptime; the others have none yet.
    assert.match(
      await row("MockAI").innerText(),
      /OK\s+32,000 \/ 1,000\s+\$1\.00 \/ \$2\.00\s+[\d,.]+ \/ [\d,.]+ ms\s+—\s+100% \/ 100% \/ 100%/,
    );
    assert.match(await row("Backup").innerText(), /\$3\.00 \/ \$4\.00\s+—\s+—\s+— \/ — \/ —/);
    assert.match(await row("MockAnthropic").innerText(), /\$5\.00 \/ \$10\.00/);
    assert.match(await details.innerText(), /Context\s+32,000 tokens/);
    await screenshot(page, "models");
    await details.getByRole("button", { name: "Close the model details" }).click();
    await gone(details, "the model details close");
    assert.equal(browser.problems, []);
  });

  test("at phone width the page fits the screen", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("button", { name: "Details of model mock/claude" }).click();
    await page.getByRole("table", { name: "Endpoints of mock/claude" }).waitFor();
    assert.ok(await fitsWidth(page), "no sideways scroll of the page");
    await screenshot(page, "models-phone");
  });
}

test.run();

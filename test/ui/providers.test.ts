import type { Page } from "playwright-core";
import * as assert from "uvu/assert";
import { suite } from "../support/suite.js";
import {
  chromiumMissing,
  fitsWidth,
  goTo,
  openConsole,
  screenshot,
  signIn,
  type ConsoleSession,
} from "../support/browser.js";
import { writeCatalogFile } from "../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { call } from "../support/http.js";
import { MOCK_UPSTREAM_API_KEY, startMockUpstream, type MockUpstream } from "../upstream/mock-upstream.js";

/**
 * The console's providers panel (ui/src/pages/providers-panel.tsx, on the Models page) in a real
 * browser: each provider's kind, and for a pool its keys by position with their state after real
 * calls (one refused by the mock, one resting after a 429), never a key.
 */
interface Context {
  upstream: MockUpstream;
  gw: TestGateway;
  browser: ConsoleSession;
  page: Page;
}
const test = suite<Context>("console: providers");
const REVOKED = "revoked-key-shown-nowhere";

if (!chromiumMissing(test, "console providers browser test")) {
  test.before(async (ctx) => {
    ctx.upstream = await startMockUpstream();
    const { upstream } = ctx;
    const pricing = { prompt: "0.000001", completion: "0.000002" };
    const config = await writeCatalogFile({
      providers: [
        { slug: "single", name: "Single", kind: "openai", base_url: upstream.openaiBaseUrl, api_key: upstream.apiKey },
        {
          slug: "pooled",
          name: "Pooled",
          kind: "anthropic",
          base_url: upstream.anthropicBaseUrl,
          api_keys: [{ key: `${MOCK_UPSTREAM_API_KEY}-a`, weight: 2 }, REVOKED, `${MOCK_UPSTREAM_API_KEY}-c`],
        },
      ],
      models: [
        {
          id: "ui/single",
          name: "Single",
          context_length: 8000,
          endpoints: [{ provider: "single", upstream_model_id: "single-model", pricing }],
        },
        {
          id: "ui/pooled",
          name: "Pooled",
          context_length: 8000,
          endpoints: [{ provider: "pooled", upstream_model_id: "pooled-model", pricing }],
        },
      ],
    });
    ctx.gw = await startTestGateway({ GATEWAY_CONFIG: config });
    const { url, key } = ctx.gw;
    // Enough calls for the pool to meet its revoked key; then one 429 that rests the key it hits.
    for (let i = 0; i < 12; i++) {
      const res = await call(url, "POST", "/api/v1/chat/completions", {
        key,
        body: { model: "ui/pooled", messages: [{ role: "user", content: `question ${i}` }] },
      });
      assert.is(res.status, 200, res.text);
    }
    upstream.rule({ status: 429, retryAfter: 600, times: 1 });
    await call(url, "POST", "/api/v1/chat/completions", {
      key,
      body: { model: "ui/pooled", messages: [{ role: "user", content: "rate limited" }] },
    });
    ctx.browser = await openConsole(url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, key);
    await goTo(ctx.page, "Models");
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.gw?.stop();
    await ctx.upstream?.close();
  });

  test("each provider with its kind; a pool's keys by position, weight and state", async ({ page, browser }) => {
    const table = page.getByRole("table", { name: "Providers and their keys" });
    await table.waitFor();
    const row = (name: string) => table.getByRole("row").filter({ hasText: name });
    assert.match(await row("single").innerText(), /Single\s+single\s+openai\s+healthy/);
    const pooled = await row("pooled").innerText();
    assert.match(pooled, /anthropic/);
    assert.match(pooled, /key-1 \(weight 2\): (healthy|resting until .+)/);
    assert.match(pooled, /key-2 \(weight 1\): refused by the provider/);
    assert.match(pooled, /resting until/);
    assert.not.ok((await page.content()).includes(REVOKED));
    await screenshot(page, "providers");
    assert.equal(browser.problems, []);
  });

  test("a key that is not a management key sees each provider's health as a whole, never its keys", async ({ gw }) => {
    const created = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "viewer" } });
    assert.is(created.status, 201, created.text);
    const viewer = await openConsole(gw.url);
    try {
      await signIn(viewer.page, String((created.body as { key: string }).key));
      await goTo(viewer.page, "Models");
      const table = viewer.page.getByRole("table", { name: "Providers and their keys" });
      await table.waitFor();
      const pooled = await table.getByRole("row").filter({ hasText: "pooled" }).innerText();
      assert.match(pooled, /some keys are out/);
      assert.not.match(pooled, /key-1|weight/);
    } finally {
      await viewer.close();
    }
  });

  test("at phone width the panel fits the screen", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await fitsWidth(page), "no sideways scroll of the page");
  });
}

test.run();

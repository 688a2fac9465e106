import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { chromiumMissing, openConsole, screenshot, signIn } from "../support/browser.js";
import { at, call } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";

/**
 * The console's overview (ui/src/pages/overview.tsx) in a real browser, over real calls through
 * the mock upstream: the charts of spend and requests draw what POST /analytics/query answers,
 * grouped by model, provider, key or workspace, by day, week or month; the totals table says the
 * same in text; the key's budgets show what is left.
 */
const test = suite<{ env: InferenceGateway; other: { key: string; name: string } }>("console: overview");

if (!chromiumMissing(test, "console overview browser test")) {
  test.before(async (ctx) => {
    ctx.env = await startInferenceGateway();
    const { url, key } = ctx.env.gw;
    const created = await call(url, "POST", "/api/v1/keys", {
      key,
      body: { name: "batch-robot", limit: 20, limit_reset: "monthly" },
    });
    assert.is(created.status, 201);
    ctx.other = { key: String(at(created.body, "key")), name: "batch-robot" };
    const chat = (callerKey: string, model: string) =>
      call(url, "POST", "/api/v1/chat/completions", {
        key: callerKey,
        body: { model, messages: [{ role: "user", content: "Hello there" }] },
      });
    for (const [callerKey, model] of [
      [key, "mock/chat"],
      [key, "mock/chat"],
      [ctx.other.key, "mock/chat"],
      [key, "mock/claude"],
    ] as const) {
      const res = await chat(callerKey, model);
      assert.is(res.status, 200, res.text);
    }
  });
  test.after(async (ctx) => ctx.env?.stop());

  test("the charts and totals show the spend and requests of real calls, by model and by key", async ({
    env,
    other,
  }) => {
    const browser = await openConsole(env.gw.url);
    try {
      const { page } = browser;
      await signIn(page, env.gw.key);
      const spend = page.getByRole("figure", { name: "Spend (USD) by model" });
      await spend.locator("canvas").first().waitFor();
      assert.ok(
        (await spend.locator("canvas").first().boundingBox())!.width > 200,
        "the chart is drawn at the frame's width",
      );
      await page.getByRole("figure", { name: "Requests by model" }).locator("canvas").first().waitFor();
      // uPlot's legend names each series.
      const legend = await spend.locator(".u-legend").innerText();
      assert.match(legend, "mock/chat");
      assert.match(legend, "mock/claude");

      // Pointing at today's bucket (the last one), the legend shows its values.
      const plot = spend.locator(".u-over");
      const box = (await plot.boundingBox())!;
      await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
      assert.match(await spend.locator(".u-legend").innerText(), /mock\/chat\s*\$0\.0\d*[1-9]/);
      const requests = page.getByRole("figure", { name: "Requests by model" });
      const requestsBox = (await requests.locator(".u-over").boundingBox())!;
      await page.mouse.move(requestsBox.x + requestsBox.width - 2, requestsBox.y + requestsBox.height / 2);
      assert.match(await requests.locator(".u-legend").innerText(), /mock\/chat\s*3\b/);

      const totals = page.getByRole("table", { name: /^Totals by model/ });
      assert.match(
        await totals.getByRole("row", { name: /mock\/chat/ }).innerText(),
        /mock\/chat\s+3\s+\$0\.0\d*[1-9]/,
      );
      assert.match(await totals.getByRole("row", { name: /mock\/claude/ }).innerText(), /mock\/claude\s+1\s+\$/);
      await page.getByRole("table", { name: "Budgets that apply to this key" }).waitFor();
      await screenshot(page, "overview");

      // By key: the ledger's key hashes are shown by the keys' names.
      await page.getByLabel("Group by").selectOption({ label: "API key" });
      const byKey = page.getByRole("table", { name: /^Totals by API key/ });
      await byKey.getByRole("row", { name: new RegExp(other.name) }).waitFor();
      assert.match(await byKey.getByRole("row", { name: new RegExp(other.name) }).innerText(), /\s1\s+\$/);
      assert.match(await byKey.getByRole("row", { name: /Bootstrap management key/ }).innerText(), /\s3\s+\$/);
      await page.getByRole("figure", { name: "Spend (USD) by API key" }).locator("canvas").first().waitFor();

      // By month: the same calls in this month's bucket.
      await page.getByLabel("Period").selectOption({ label: "Monthly" });
      await page.getByRole("table", { name: "Totals by API key, the last 12 months" }).waitFor();
      assert.match(await page.getByRole("table", { name: /^Totals by API key/ }).innerText(), other.name);
      assert.equal(browser.problems, []);
    } finally {
      await browser.close();
    }
  });

  test("the budgets of a key with a limit show what is left", async ({ env, other }) => {
    const browser = await openConsole(env.gw.url);
    try {
      const { page } = browser;
      await signIn(page, other.key);
      const budgets = page.getByRole("table", { name: "Budgets that apply to this key" });
      await budgets.waitFor();
      const row = await budgets.getByRole("row", { name: /credit limit/ }).innerText();
      assert.match(row, /key's monthly credit limit\s+monthly\s+\$20\.00\s+\$0\.0\d*[1-9]\s+\$19\.9/);
      const meter = budgets.getByRole("meter", { name: /Left of the key's monthly credit limit/ });
      assert.match((await meter.getAttribute("aria-valuetext")) ?? "", /^\$19\.9\d* of \$20\.00$/);
      assert.match(
        await page.getByText(/^Binding now:/).innerText(),
        /key's monthly credit limit — \$19\.9\d* left of \$20\.00/,
      );
      assert.equal(browser.problems, []);
    } finally {
      await browser.close();
    }
  });
}

test.run();

import type { Page } from "playwright-core";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import {
  chromiumMissing,
  fitsWidth,
  goTo,
  openConsole,
  screenshot,
  signIn,
  type ConsoleSession,
} from "../support/browser.js";
import { at, call } from "../support/http.js";
import { eventually } from "../support/eventually.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";

/**
 * The console's usage log (ui/src/pages/usage.tsx) in a real browser, over real calls through the
 * mock upstream: the calls GET /generations lists, newest first; filtering by model, key, status
 * and time; one call's details from GET /generation; cursor paging; a key that is not a management
 * key sees its own calls only.
 */
interface Context {
  env: InferenceGateway;
  browser: ConsoleSession;
  page: Page;
  robot: { secret: string; hash: string };
  /** Generation ids of the calls made, in the order made. */
  ids: { chat: string[]; robot: string; claude: string; failed: string };
}
const test = suite<Context>("console: usage log");

const ROBOT = "usage-robot";
const calls = (page: Page) => page.getByRole("table", { name: "Calls, newest first" });
const filters = (page: Page) => page.getByRole("form", { name: "Filters of the usage log" });

async function apply(page: Page): Promise<void> {
  await filters(page).getByRole("button", { name: "Apply filters" }).click();
}

/** The generations the table shows, top to bottom (from the rows' Details buttons). */
async function shownIds(page: Page): Promise<string[]> {
  const buttons = await calls(page)
    .getByRole("button", { name: /^Details of / })
    .all();
  return Promise.all(
    buttons.map(async (button) => (await button.getAttribute("aria-label"))!.replace(/^Details of /, "")),
  );
}

/** Waits until the table shows exactly these generations, in this order. */
async function waitForIds(page: Page, ids: string[]): Promise<void> {
  await eventually(() => shownIds(page).catch(() => []), `the log shows ${ids.join(", ")}`, {
    until: (shown) => JSON.stringify(shown) === JSON.stringify(ids),
  });
}

async function chat(
  env: InferenceGateway,
  key: string,
  model: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key,
    headers,
    body: { model, messages: [{ role: "user", content: "Hello there" }] },
  });
  assert.is(res.status, 200, res.text);
  return String(at(res.body, "id"));
}

async function generationIds(env: InferenceGateway, query = ""): Promise<string[]> {
  const res = await call(env.gw.url, "GET", `/api/v1/generations?limit=100${query}`, { key: env.gw.key });
  assert.is(res.status, 200, res.text);
  return (at(res.body, "data") as Array<{ id: string }>).map((g) => g.id);
}

if (!chromiumMissing(test, "console usage log browser test")) {
  test.before(async (ctx) => {
    ctx.env = await startInferenceGateway();
    const { url, key } = ctx.env.gw;
    const created = await call(url, "POST", "/api/v1/keys", { key, body: { name: ROBOT } });
    assert.is(created.status, 201, created.text);
    ctx.robot = { secret: String(at(created.body, "key")), hash: String(at(created.body, "data", "hash")) };
    // The second chat is answered from the response cache, which the first filled.
    const cached = { "x-gateway-cache-ttl": "600" };
    const chatIds = [await chat(ctx.env, key, "mock/chat", cached), await chat(ctx.env, key, "mock/chat", cached)];
    const robot = await chat(ctx.env, ctx.robot.secret, "mock/chat");
    const claude = await chat(ctx.env, key, "mock/claude");
    // The provider refuses the request: a generation that ended in an error.
    ctx.env.upstream.rule({ model: "chat-a", status: 400, times: 1 });
    const refused = await call(url, "POST", "/api/v1/chat/completions", {
      key,
      body: {
        model: "mock/chat",
        messages: [{ role: "user", content: "Hello there" }],
        provider: { only: ["mockai"] },
      },
    });
    assert.is(refused.status, 400, refused.text);
    const [failed] = await generationIds(ctx.env, "&status=error");
    ctx.ids = { chat: chatIds, robot, claude, failed: failed! };

    ctx.browser = await openConsole(url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, key);
    await goTo(ctx.page, "Usage log");
    await calls(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.env?.stop();
  });

  test("the log lists the real calls newest first, as the API does", async ({ env, page, ids }) => {
    const expected = await generationIds(env);
    assert.equal(expected, [ids.failed, ids.claude, ids.robot, ids.chat[1]!, ids.chat[0]!]);
    await waitForIds(page, expected);
    const claudeRow = calls(page)
      .getByRole("row")
      .filter({ has: page.getByRole("button", { name: `Details of ${ids.claude}` }) });
    assert.match(await claudeRow.innerText(), /mock\/claude\s+MockAnthropic\s+Bootstrap management key\s+Success/);
    const failedRow = calls(page)
      .getByRole("row")
      .filter({ has: page.getByRole("button", { name: `Details of ${ids.failed}` }) });
    assert.match(await failedRow.innerText(), /mock\/chat\s+MockAI\s+Bootstrap management key\s+Error \(400\)/);
    const robotRow = calls(page)
      .getByRole("row")
      .filter({ has: page.getByRole("button", { name: `Details of ${ids.robot}` }) });
    assert.match(await robotRow.innerText(), ROBOT);
    const rowOf = (id: string) =>
      calls(page)
        .getByRole("row")
        .filter({ has: page.getByRole("button", { name: `Details of ${id}` }) });
    assert.match(await rowOf(ids.chat[1]!).innerText(), /\$0\.00\s+cache hit/);
    assert.not.match(await rowOf(ids.chat[0]!).innerText(), /cache hit/);
    await screenshot(page, "usage");
  });

  test("filters: by model, by key, by status, by time; clearing them shows every call", async ({ env, page, ids }) => {
    await filters(page).getByLabel("Model").fill("mock/claude");
    await apply(page);
    await waitForIds(page, [ids.claude]);
    assert.equal(await generationIds(env, "&model=mock%2Fclaude"), [ids.claude]);

    await filters(page).getByLabel("Model").fill("");
    await filters(page).getByLabel("Key").selectOption({ label: ROBOT });
    await apply(page);
    await waitForIds(page, [ids.robot]);

    await filters(page).getByLabel("Key").selectOption({ label: "Any key" });
    await filters(page).getByLabel("Status").selectOption({ label: "Error" });
    await apply(page);
    await waitForIds(page, [ids.failed]);

    // Model and status together: the chat calls that succeeded.
    await filters(page).getByLabel("Model").fill("mock/chat");
    await filters(page).getByLabel("Status").selectOption({ label: "Success" });
    await apply(page);
    await waitForIds(page, [ids.robot, ids.chat[1]!, ids.chat[0]!]);

    // A range in the future holds no call; a range the wrong way round is refused, naming it.
    await filters(page).getByLabel("From (UTC)").fill("2099-01-01T00:00:00");
    await apply(page);
    await calls(page).getByText("No calls match.").waitFor();
    await filters(page).getByLabel("To (UTC)").fill("2098-01-01T00:00:00");
    await apply(page);
    await page
      .getByRole("alert")
      .filter({ hasText: "The filters were not applied" })
      .filter({ hasText: "“From” must be before “To”." })
      .waitFor();

    await filters(page).getByRole("button", { name: "Clear filters" }).click();
    await waitForIds(page, await generationIds(env));
    assert.is(await page.getByRole("alert").count(), 0);
  });

  test("a call's details: costs, tokens, timings and every provider attempt, as GET /generation gives them", async ({
    env,
    page,
    ids,
  }) => {
    await page.getByRole("button", { name: `Details of ${ids.claude}` }).click();
    const details = page.getByRole("region", { name: `Generation ${ids.claude}` });
    await details.waitFor();
    const api = await call(env.gw.url, "GET", `/api/v1/generation?id=${ids.claude}`, { key: env.gw.key });
    const data = at(api.body, "data") as { tokens_prompt: number; tokens_completion: number; total_cost: number };
    const facts = await details.locator("dl").innerText();
    assert.match(facts, /Status\s+Success/);
    assert.match(facts, /Model\s+mock\/claude/);
    assert.match(facts, /Provider\s+MockAnthropic/);
    assert.match(facts, new RegExp(`Prompt tokens\\s+${data.tokens_prompt}\\b`));
    assert.match(facts, new RegExp(`Completion tokens\\s+${data.tokens_completion}\\b`));
    assert.match(facts, /Region\s+europe/);
    assert.ok(data.total_cost > 0);
    const attempts = page.getByRole("table", { name: `Provider attempts of ${ids.claude}` });
    assert.match(await attempts.locator("tbody").innerText(), /1\s+mock\/claude@mockanthropic\s+MockAnthropic\s+200/);
    await screenshot(page, "usage-details");
    await details.getByRole("button", { name: `Close generation ${ids.claude}` }).click();
    await details.waitFor({ state: "detached" });
  });

  test("the log pages by 20 with the API's cursor", async ({ env, page, browser }) => {
    for (let i = 0; i < 20; i++) await chat(env, env.gw.key, "mock/chat");
    const all = await generationIds(env);
    assert.is(all.length, 25);
    await page.getByRole("button", { name: "Refresh the usage log" }).click();
    await waitForIds(page, all.slice(0, 20));
    const pager = page.getByRole("navigation", { name: "Pages of Calls, newest first" });
    await pager.getByRole("button", { name: "Next page" }).click();
    await waitForIds(page, all.slice(20));
    assert.match(await pager.innerText(), "Rows 21–25");
    assert.ok(await pager.getByRole("button", { name: "Next page" }).isDisabled());
    await pager.getByRole("button", { name: "Previous page" }).click();
    await waitForIds(page, all.slice(0, 20));
    assert.equal(browser.problems, []);
  });

  test("at phone width the log fits the screen, its rows as cards", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const [newest] = await shownIds(page);
      await page.getByRole("button", { name: `Details of ${newest}` }).click();
      await page.getByRole("region", { name: `Generation ${newest}` }).waitFor();
      assert.ok(await fitsWidth(page), "no sideways scroll of the page");
      await screenshot(page, "usage-phone");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  test("a key that is not a management key sees its own calls only", async ({ env, ids, robot }) => {
    const other = await openConsole(env.gw.url);
    try {
      await signIn(other.page, robot.secret);
      await goTo(other.page, "Usage log");
      await waitForIds(other.page, [ids.robot]);
      assert.ok(await filters(other.page).getByLabel("Key").isDisabled());
      assert.match(
        await other.page.getByRole("region", { name: "Filters" }).innerText(),
        "This key sees its own calls only.",
      );
      assert.equal(other.problems, []);
    } finally {
      await other.close();
    }
  });
}

test.run();

import type { Page } from "playwright-core";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { chatItems, FAST_ENGINE, submit, waitTerminal } from "../support/batches.js";
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
 * The console's Batches page (ui/src/pages/batches.tsx) in a real browser, with the batch runner
 * running against the mock upstream: a batch submitted through the API is watched until it
 * completes (the upstream holds its items until the page has shown it running), its counts and
 * results; cancelling and deleting, confirmed; the API's message when a change fails; paging.
 */
interface Context {
  env: InferenceGateway;
  browser: ConsoleSession;
  page: Page;
}
const test = suite<Context>("console: batches");

const list = (page: Page) => page.getByRole("table", { name: "Batches, newest first" });
const detail = (page: Page, id: string) => page.getByRole("region", { name: `Batch ${id}` });
const statusOf = (page: Page, id: string) => detail(page, id).getByRole("status", { name: "Batch status" });

/** A gate for the mock upstream: its requests wait until `open()`. */
function gate(): { until: Promise<void>; open: () => void } {
  let open!: () => void;
  const until = new Promise<void>((resolve) => (open = resolve));
  return { until, open };
}

async function submitted(env: InferenceGateway, items: number, prefix = "item"): Promise<string> {
  const res = await submit(env.gw.url, env.gw.key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(items, "mock/chat", prefix),
  });
  assert.is(res.status, 202, res.text);
  return String(at(res.body, "id"));
}

async function openBatch(page: Page, id: string): Promise<void> {
  await page.getByRole("button", { name: "Refresh the batches" }).click();
  await page.getByRole("button", { name: `Open batch ${id}` }).click();
  await detail(page, id).waitFor();
}

if (!chromiumMissing(test, "console batches browser test")) {
  test.before(async (ctx) => {
    // Many tries per item: a held item may time out upstream and is tried again once released.
    ctx.env = await startInferenceGateway({ ...FAST_ENGINE, GATEWAY_BATCH_MAX_ATTEMPTS: "20" });
    ctx.browser = await openConsole(ctx.env.gw.url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, ctx.env.gw.key);
    await goTo(ctx.page, "Batches");
    await list(ctx.page).waitFor();
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.env?.stop();
  });
  test.before.each(({ env }) => env.upstream.reset());

  test("a batch submitted through the API is watched until it completes, with its counts and results", async ({
    env,
    page,
  }) => {
    const held = gate();
    env.upstream.rule({ until: held.until });
    const id = await submitted(env, 3);
    await openBatch(page, id);

    // Running: a progress bar, no results yet, a cancel button and no delete.
    const bar = detail(page, id).getByRole("progressbar", { name: `Progress of batch ${id}` });
    await bar.waitFor();
    assert.match(await statusOf(page, id).innerText(), /^(Validating|In progress)$/);
    assert.match(await detail(page, id).innerText(), "0 of 3 done");
    assert.is(
      await detail(page, id)
        .getByRole("button", { name: `Cancel batch ${id}` })
        .count(),
      1,
    );
    assert.is(
      await detail(page, id)
        .getByRole("button", { name: `Delete batch ${id}` })
        .count(),
      0,
    );
    assert.is(await page.getByRole("table", { name: `Results of batch ${id}` }).count(), 0);
    await screenshot(page, "batches-running");

    // The upstream answers; the page, polling, sees the batch complete without a reload.
    held.open();
    await statusOf(page, id).filter({ hasText: "Completed" }).waitFor({ timeout: 60_000 });
    const api = await call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key: env.gw.key });
    assert.is(at(api.body, "status"), "completed");
    assert.equal(at(api.body, "request_counts"), { completed: 3, failed: 0, total: 3 });
    await gone(bar, "no progress bar once it has ended");
    assert.match(await detail(page, id).innerText(), "3 of 3 done");

    const results = page.getByRole("table", { name: `Results of batch ${id}` });
    await results.waitFor();
    assert.is(await results.locator("tbody tr").count(), 3);
    for (const customId of ["item-0", "item-1", "item-2"]) {
      const row = results.getByRole("row").filter({ has: page.getByRole("cell", { name: customId, exact: true }) });
      assert.match(await row.innerText(), /200 OK\s+Hello from \S+/);
    }
    // The list row says the same.
    const row = list(page).getByRole("row").filter({ hasText: id });
    await row.filter({ hasText: "Completed" }).waitFor();
    assert.match(await row.innerText(), "3 of 3 done");
    await screenshot(page, "batches");
  });

  test("cancel a running batch after confirming, then delete it", async ({ env, page }) => {
    const held = gate();
    env.upstream.rule({ until: held.until });
    const id = await submitted(env, 4, "stop");
    await openBatch(page, id);
    await detail(page, id)
      .getByRole("button", { name: `Cancel batch ${id}` })
      .click();
    await page.getByRole("button", { name: "Yes, cancel the batch" }).click();
    // Items already sent finish; the rest end cancelled.
    await statusOf(page, id)
      .filter({ hasText: /Cancelling|Cancelled/ })
      .waitFor();
    held.open();
    await statusOf(page, id).filter({ hasText: "Cancelled" }).waitFor({ timeout: 60_000 });
    const done = await waitTerminal(env.gw.url, env.gw.key, id);
    assert.is(at(done.body, "status"), "cancelled");
    const counts = at(done.body, "request_counts") as { completed: number; failed: number; total: number };
    assert.match(await detail(page, id).innerText(), `${counts.completed + counts.failed} of 4 done`);

    await detail(page, id)
      .getByRole("button", { name: `Delete batch ${id}` })
      .click();
    await page.getByRole("button", { name: "Cancel", exact: true }).click();
    assert.is(await detail(page, id).count(), 1, "cancelling the confirmation keeps the batch");
    await detail(page, id)
      .getByRole("button", { name: `Delete batch ${id}` })
      .click();
    await page.getByRole("button", { name: "Yes, delete the batch" }).click();
    await detail(page, id).waitFor({ state: "detached" });
    await list(page).getByRole("row").filter({ hasText: id }).waitFor({ state: "detached" });
    assert.is((await call(env.gw.url, "GET", `/api/v1/batches/${id}`, { key: env.gw.key })).status, 404);
  });

  test("a change the API refuses shows the API's message", async ({ env, page }) => {
    const id = await submitted(env, 1, "gone");
    await waitTerminal(env.gw.url, env.gw.key, id);
    await openBatch(page, id);
    await statusOf(page, id).filter({ hasText: "Completed" }).waitFor();
    // Deleted behind the page's back: the page's delete gets the API's 404.
    assert.is((await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key: env.gw.key })).status, 200);
    await detail(page, id)
      .getByRole("button", { name: `Delete batch ${id}` })
      .click();
    await page.getByRole("button", { name: "Yes, delete the batch" }).click();
    const alert = detail(page, id).getByRole("alert").filter({ hasText: "The change was not made" });
    await alert.waitFor();
    const refused = await call(env.gw.url, "DELETE", `/api/v1/batches/${id}`, { key: env.gw.key });
    assert.match(await alert.innerText(), String(at(refused.body, "error", "message")));
    await detail(page, id)
      .getByRole("button", { name: `Close batch ${id}` })
      .click();
  });

  test("the list pages by 20, newest first", async ({ env, page, browser }) => {
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) ids.push(await submitted(env, 1, `page-${i}`));
    for (const id of ids) await waitTerminal(env.gw.url, env.gw.key, id);
    await page.getByRole("button", { name: "Refresh the batches" }).click();
    const pager = page.getByRole("navigation", { name: "Pages of Batches, newest first" });
    await pager.waitFor();
    assert.is(await list(page).locator("tbody tr").count(), 20);
    assert.match(await list(page).locator("tbody tr").first().innerText(), ids.at(-1)!);
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.getByText(/^Rows 21–/).waitFor();
    // The first batch submitted is on the second page.
    await list(page).getByRole("row").filter({ hasText: ids[0]! }).waitFor();
    await pager.getByRole("button", { name: "Previous page" }).click();
    await pager.getByText("Rows 1–20").waitFor();
    await list(page)
      .getByRole("row")
      .filter({ hasText: ids.at(-1)! })
      .waitFor();

    // At phone width: the page fits, an open batch and its results included.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const newest = ids.at(-1)!;
      await openBatch(page, newest);
      await page.getByRole("table", { name: `Results of batch ${newest}` }).waitFor();
      await screenshot(page, "batches-phone");
      assert.ok(await fitsWidth(page), "no sideways scroll of the page");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    assert.equal(browser.problems, []);
  });
}

test.run();

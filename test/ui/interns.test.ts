import { existsSync } from "node:fs";
import path from "node:path";
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
import { shellStep, startRuntimeGateway, type RuntimeEnv } from "../support/intern-runtime.js";
import { seedOrganization } from "../support/seed.js";

/**
 * The console's Interns page (ui/src/pages/interns.tsx, intern-chat.tsx) in a real browser, with
 * the real intern runtime (host processes, agent) driven by a scripted model in the mock
 * upstream: creating an intern and seeing it boot, a chat whose stream is rendered as it arrives,
 * answering the intern's permission question (allow and reject), suspending and provisioning, and
 * an organization outside the programme.
 */
interface Context {
  env: RuntimeEnv;
  browser: ConsoleSession;
  page: Page;
  internId: string;
}
const test = suite<Context>("console: interns");

const NAME = "helper";
/** Booting a real host process: generous, as a guard only. */
const BOOT_GUARD = { timeout: 60_000 };
const chatPane = (page: Page) => page.getByRole("region", { name: `Chat with ${NAME}` });
const conversation = (page: Page) => chatPane(page).getByRole("log", { name: `Conversation with ${NAME}` });
const question = (page: Page) => chatPane(page).getByRole("region", { name: `${NAME} asks` });
const rowOf = (page: Page) =>
  page
    .getByRole("table", { name: "Interns of this workspace" })
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name: NAME, exact: true }) });

function workFile(env: RuntimeEnv, internId: string, file: string): string {
  return path.join(env.dataDir, "interns", internId, "work", file);
}

async function send(page: Page, text: string): Promise<void> {
  await chatPane(page).getByLabel(`Message to ${NAME}`).fill(text);
  await chatPane(page).getByRole("button", { name: "Send", exact: true }).click();
}

if (!chromiumMissing(test, "console interns browser test")) {
  test.before(async (ctx) => {
    ctx.env = await startRuntimeGateway();
    ctx.browser = await openConsole(ctx.env.gw.url);
    ctx.page = ctx.browser.page;
    await signIn(ctx.page, ctx.env.key);
    await goTo(ctx.page, "Interns");
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.env?.stop();
  });

  test("create an intern on the page and watch it boot until it runs", async (ctx) => {
    const { page, env } = ctx;
    const create = page.getByRole("region", { name: "Create an intern" });
    await create.getByLabel("Name").fill(NAME);
    await create.getByLabel(/^Model/).fill("mock/chat");
    assert.ok(await create.getByLabel("Start it now").isChecked());
    await create.getByRole("button", { name: "Create intern" }).click();
    await rowOf(page).waitFor();
    // The page polls while the intern boots: the Chat button appears once it runs.
    await page.getByRole("button", { name: `Chat with ${NAME}` }).waitFor(BOOT_GUARD);
    assert.match(await rowOf(page).innerText(), /Running\s+mock\/chat/);
    const listed = await call(env.gw.url, "GET", "/api/v1/interns", { key: env.key });
    const intern = (at(listed.body, "data") as Array<{ id: string; name: string; status: string }>).find(
      (i) => i.name === NAME,
    )!;
    assert.is(intern.status, "running");
    ctx.internId = intern.id;
    await screenshot(page, "interns");
  });

  test("the chat renders the stream; a permission question is answered with its buttons and the run goes on", async ({
    env,
    page,
    internId,
  }) => {
    env.upstream.scripts.define("approve", [
      shellStep("echo approved-output > proof.txt; cat proof.txt"),
      { reply: "Ran it: {{last_tool_result}}" },
    ]);
    await page.getByRole("button", { name: `Chat with ${NAME}` }).click();
    await chatPane(page).waitFor();
    assert.ok(await chatPane(page).getByLabel("Ask me before running commands").isChecked());
    await send(page, "[script:approve] write the proof");

    // The stream paused on the question: the command is shown, the first option has the focus.
    await question(page).waitFor();
    assert.match(await question(page).innerText(), "echo approved-output > proof.txt; cat proof.txt");
    const allow = question(page).getByRole("button", { name: "Allow once" });
    assert.ok(
      await allow.evaluate((button) => button.ownerDocument.activeElement === button),
      "the question takes the focus",
    );
    for (const option of ["Allow always", "Reject once", "Reject always"])
      assert.is(await question(page).getByRole("button", { name: option }).count(), 1);
    assert.match(await conversation(page).innerText(), "[script:approve] write the proof");
    assert.not.ok(existsSync(workFile(env, internId, "proof.txt")), "nothing ran before the answer");
    await screenshot(page, "interns-question");

    await allow.click();
    await question(page).waitFor({ state: "detached" });
    await conversation(page)
      .getByText(/Ran it: .*approved-output/)
      .waitFor();
    assert.match(await conversation(page).innerText(), "You answered: Allow once");
    assert.ok(existsSync(workFile(env, internId, "proof.txt")), "the command ran in the intern's working directory");
    assert.is(await chatPane(page).getByRole("alert").count(), 0);
    await screenshot(page, "interns-chat");
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      assert.ok(await fitsWidth(page), "no sideways scroll of the page at phone width");
      await screenshot(page, "interns-phone");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  test("rejecting the question: the command does not run and the intern says so", async ({ env, page, internId }) => {
    env.upstream.scripts.define("refuse", [
      shellStep("touch forbidden.txt"),
      { reply: "Understood: {{last_tool_result}}" },
    ]);
    await chatPane(page).getByRole("button", { name: "New conversation" }).click();
    await send(page, "[script:refuse] make the file");
    await question(page).getByRole("button", { name: "Reject once" }).click();
    await conversation(page)
      .getByText(/Understood: /)
      .waitFor();
    assert.not.ok(existsSync(workFile(env, internId, "forbidden.txt")), "the rejected command did not run");
  });

  test("an error of the chat is shown with the API's message", async ({ env, page, internId }) => {
    // A reply to a question that is no longer pending: the API's 409.
    env.upstream.scripts.define("asks", [shellStep("true"), { reply: "done" }]);
    await send(page, "[script:asks] once more");
    await question(page).waitFor();
    const runs = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/suspend`, { key: env.key });
    assert.is(runs.status, 200, runs.text);
    await question(page).getByRole("button", { name: "Allow once" }).click();
    const alert = chatPane(page).getByRole("alert").filter({ hasText: "The intern did not answer" });
    await alert.waitFor();
    const refused = await call(env.gw.url, "POST", `/api/v1/interns/${internId}/chat/completions`, {
      key: env.key,
      body: { stream: true, messages: [{ role: "user", content: "hello" }] },
    });
    assert.is(refused.status, 409, refused.text);
    assert.match(await alert.innerText(), String(at(refused.body, "error", "message")));
    await chatPane(page)
      .getByRole("button", { name: `Close the chat with ${NAME}` })
      .click();
  });

  test("provision and suspend from the list", async ({ env, page, internId, browser }) => {
    await page.getByRole("button", { name: "Refresh the interns" }).click();
    await rowOf(page).filter({ hasText: "Suspended" }).waitFor();
    await page.getByRole("button", { name: `Provision ${NAME}` }).click();
    await page.getByRole("button", { name: `Chat with ${NAME}` }).waitFor(BOOT_GUARD);
    assert.is(
      at((await call(env.gw.url, "GET", `/api/v1/interns/${internId}`, { key: env.key })).body, "data", "status"),
      "running",
    );
    await page.getByRole("button", { name: `Suspend ${NAME}` }).click();
    await rowOf(page).filter({ hasText: "Suspended" }).waitFor();
    assert.is(
      at((await call(env.gw.url, "GET", `/api/v1/interns/${internId}`, { key: env.key })).body, "data", "status"),
      "stopped",
    );
    assert.equal(browser.problems, []);
  });

  test("an organization outside the programme is told so", async ({ env }) => {
    const outsider = await seedOrganization("console-outsider");
    const other = await openConsole(env.gw.url);
    try {
      await signIn(other.page, outsider.key);
      await goTo(other.page, "Interns");
      const notice = other.page.getByRole("region", { name: "Not in the interns programme" });
      await notice.waitFor();
      const refused = await call(env.gw.url, "GET", "/api/v1/interns", { key: outsider.key });
      assert.is(refused.status, 404);
      assert.match(await notice.innerText(), String(at(refused.body, "error", "message")));
      assert.is(await other.page.getByRole("region", { name: "Create an intern" }).count(), 0);
      await screenshot(other.page, "interns-outside");
      assert.equal(other.problems, []);
    } finally {
      await other.close();
    }
  });
}

test.run();

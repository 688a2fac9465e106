import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Test } from "uvu";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { eventually } from "./eventually.js";
import { missingTools } from "./required-tools.js";

/**
 * The web console's browser tests (test/ui/): Debian's chromium driven by playwright-core (no
 * browser download; .ci/run installs the package), headless, with a fresh profile per session, on
 * a test gateway's /ui/. Screenshots go to test-output/screenshots/<name>.png (git-ignored) for a
 * reviewer to look at. Without chromium a suite is skipped with a message, under CI it fails.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ROOT = path.resolve(import.meta.dirname, "../..");
export const SCREENSHOTS = path.join(ROOT, "test-output", "screenshots");

/** Registers the suite's stand-in test and returns true when chromium is not installed. */
export function chromiumMissing<T>(test: Test<T>, suite: string): boolean {
  const missing = fs.existsSync(CHROMIUM) ? [] : [CHROMIUM];
  return missingTools(test, { suite, missing, install: "apt-get install chromium fonts-dejavu-core" });
}

export interface ConsoleSession {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page and Content-Security-Policy violations: a test ends with none. */
  problems: string[];
  close(): Promise<void>;
}

export interface OpenOptions {
  /** CSS pixels; default 1280×900. A phone: 390×844. */
  viewport?: { width: number; height: number };
}

/** A new browser with the console of the gateway at `gatewayUrl` open (signed out). */
export async function openConsole(gatewayUrl: string, options: OpenOptions = {}): Promise<ConsoleSession> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "console-browser-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: options.viewport ?? { width: 1280, height: 900 },
    // UTC in the page as on the gateway, so dates read the same in every run.
    timezoneId: "UTC",
    locale: "en-US",
  });
  try {
    // A step that waits this long is broken, not slow: fail with the step named.
    context.setDefaultTimeout(15_000);
    const problems: string[] = [];
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("console", (message) => {
      if (/Content[ -]Security[ -]Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
    });
    await page.goto(`${gatewayUrl}/ui/`);
    return {
      context,
      page,
      problems,
      async close() {
        await context.close();
        fs.rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}

/** Pastes `key` on the sign-in screen and waits for the console (its sign-out button). */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** Opens a page of the console by its navigation link and waits for its heading. */
export async function goTo(page: Page, link: string, heading = link): Promise<void> {
  const nav = page.getByRole("navigation", { name: "Console" });
  if (!(await nav.isVisible())) await page.getByRole("button", { name: "Menu" }).click();
  await nav.getByRole("link", { name: link }).click();
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
}

/**
 * Waits until nothing on the page matches: what an action removes goes in the page's next render,
 * which need not come before whatever else the test waited for (one look could see it still there).
 */
export async function gone(locator: Locator, what: string): Promise<void> {
  await eventually(() => locator.count(), what, { until: (n) => n === 0 });
}

/*
 * What the page's own scripts see. Passed as expressions: these run in the browser, and the tests'
 * TypeScript has no DOM library to type them.
 */
export async function sessionStorageOf(page: Page): Promise<Record<string, string>> {
  return (await page.evaluate("Object.fromEntries(Object.entries(sessionStorage))")) as Record<string, string>;
}

export async function clipboardText(page: Page): Promise<string> {
  return String(await page.evaluate("navigator.clipboard.readText()"));
}

/** Whether the page fits the window's width (no sideways scrolling). */
export async function fitsWidth(page: Page): Promise<boolean> {
  return (await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")) === true;
}

/** The whole page as test-output/screenshots/<name>.png; returns the file. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: "disabled", caret: "hide" });
  return file;
}

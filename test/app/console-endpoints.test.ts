import fs from "node:fs";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { ROOT } from "../architecture/import-graph.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { call, rawRequest } from "../support/http.js";

/**
 * The web console's files at /ui/ (server/app/console-endpoints.ts): ui/dist as built, without
 * a key, a strict Content-Security-Policy and the other security headers on every answer,
 * revalidation by ETag, the page for the app's sub-paths, and nothing outside ui/dist whatever the
 * path tries. The browser suites (test/ui/) drive the app itself.
 */
const test = suite<{ gw: TestGateway }>("gateway: web console files");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async ({ gw }) => gw.stop());

const DIST = path.join(ROOT, "ui/dist");

function assertSecurityHeaders(headers: Headers, where: string): void {
  const policy = headers.get("content-security-policy") ?? "";
  for (const directive of [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ]) {
    assert.ok(policy.includes(directive), `${where}: ${policy}`);
  }
  assert.not.match(policy, /unsafe-inline|unsafe-eval|https?:/, where);
  assert.is(headers.get("x-content-type-options"), "nosniff", where);
  assert.is(headers.get("referrer-policy"), "no-referrer", where);
}

test("GET /ui redirects to /ui/, the built page, which loads only its own files and no inline script", async ({
  gw,
}) => {
  const redirect = await fetch(`${gw.url}/ui`, { redirect: "manual" });
  assert.is(redirect.status, 301);
  assert.is(redirect.headers.get("location"), "ui/");
  const page = await fetch(`${gw.url}/ui`);
  assert.is(page.url, `${gw.url}/ui/`);
  assert.is(page.status, 200);
  assert.is(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.is(page.headers.get("cache-control"), "no-cache");
  assertSecurityHeaders(page.headers, "/ui/");
  const html = await page.text();
  assert.is(html, fs.readFileSync(path.join(DIST, "index.html"), "utf8"));
  assert.not.match(html, /<script(?![^>]*\ssrc=)[^>]*>/, "every script is a file");
  assert.not.match(html, /<style|\sstyle=/, "no inline style");
  const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
    .map((match) => match[1]!)
    .filter((ref) => !ref.startsWith("data:"));
  assert.equal(references.sort(), ["app.css", "app.js"]);
  for (const reference of references) {
    const asset = await fetch(new URL(reference, page.url));
    assert.is(asset.status, 200, reference);
    assert.is(
      asset.headers.get("content-type"),
      reference.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
    );
    assertSecurityHeaders(asset.headers, reference);
    assert.ok(
      Buffer.from(await asset.arrayBuffer()).equals(fs.readFileSync(path.join(DIST, reference))),
      `${reference} is ui/dist/${reference}`,
    );
  }
});

test("the files are revalidated by ETag; HEAD has no body; only GET and HEAD are allowed", async ({ gw }) => {
  const first = await call(gw.url, "GET", "/ui/app.js");
  const etag = first.headers.get("etag");
  assert.ok(etag);
  const again = await call(gw.url, "GET", "/ui/app.js", { headers: { "if-none-match": etag } });
  assert.is(again.status, 304);
  assert.is(again.text, "");
  const head = await call(gw.url, "HEAD", "/ui/app.js");
  assert.is(head.status, 200);
  assert.is(head.headers.get("content-length"), String(fs.statSync(path.join(DIST, "app.js")).size));
  const post = await call(gw.url, "POST", "/ui/", { body: {} });
  assert.is(post.status, 405);
  assert.is(post.headers.get("allow"), "GET, HEAD");
  assert.is((post.body as { error: { code: number } }).error.code, 405);
});

test("a sub-path of the app is the page; its assets are found from any depth", async ({ gw }) => {
  const index = fs.readFileSync(path.join(DIST, "index.html"), "utf8");
  for (const subPath of [
    "/ui/index.html",
    "/ui/keys",
    "/ui/keys/",
    "/ui/overview?from=link",
    "/ui/constructor",
    "/ui/__proto__",
  ]) {
    const res = await call(gw.url, "GET", subPath);
    assert.is(res.status, 200, subPath);
    assert.is(res.text, index, subPath);
  }
  const deep = await call(gw.url, "GET", "/ui/keys/app.css");
  assert.is(deep.status, 200);
  assert.is(deep.text, fs.readFileSync(path.join(DIST, "app.css"), "utf8"));
});

test("nothing outside ui/dist is served under /ui/, whatever the path tries", async ({ gw }) => {
  const attempts = [
    "/ui/../package.json",
    "/ui/%2e%2e/package.json",
    "/ui/..%2fpackage.json",
    "/ui/..%2F..%2F..%2Fpackage.json",
    "/ui/%2e%2e%2fpackage.json",
    "/ui/..\\package.json",
    "/ui/../../../../etc/passwd",
    "/ui//etc/passwd",
    "/ui/./app.js",
    "/ui/.hidden",
    "/ui/app%2ejs",
    "/ui/src/main.tsx",
    "/ui/build.ts",
    "/ui/package.json",
    "/ui/app.js.map",
    "/ui/%00",
  ];
  for (const attempt of attempts) {
    const res = await rawRequest(gw.url, "GET", attempt);
    assert.is(res.status, 404, attempt);
    assert.is(res.headers["content-type"], "application/json", attempt);
    assert.is((res.body as { error: { code: number } }).error.code, 404, attempt);
    assert.is(res.headers["x-content-type-options"], "nosniff", attempt);
  }
});

test("a core-only process serves no console (its HTTP port has no REST)", async () => {
  const core = await startTestGateway({}, { coreOnly: true });
  try {
    assert.is.not((await call(core.url, "GET", "/ui/")).status, 200);
  } finally {
    await core.stop();
  }
});

test.run();

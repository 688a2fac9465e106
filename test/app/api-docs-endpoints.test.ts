import fs from "node:fs";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { ROOT } from "../architecture/import-graph.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { call, rawRequest } from "../support/http.js";
import { openApiText } from "../support/openapi.js";

/**
 * GET /openapi.json and the Swagger UI under /docs/ (server/app/api-docs-endpoints.ts): no key,
 * the generated document as it is, a page that loads only files of this origin, caching headers,
 * and nothing but the page's own files under /docs/, whatever the path tries.
 */
const test = suite<{ gw: TestGateway }>("gateway: API docs");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async ({ gw }) => gw.stop());

test("GET /openapi.json is the generated document, without a key, revalidated by ETag", async ({ gw }) => {
  const res = await call(gw.url, "GET", "/openapi.json");
  assert.is(res.status, 200);
  assert.is(res.headers.get("content-type"), "application/json");
  assert.ok(res.text === openApiText(), "the served document is gen/openapi/openapi.json");
  assert.is(res.headers.get("cache-control"), "no-cache");
  const etag = res.headers.get("etag");
  assert.ok(etag);
  const again = await call(gw.url, "GET", "/openapi.json", { headers: { "if-none-match": etag } });
  assert.is(again.status, 304);
  assert.is(again.text, "");
  const head = await call(gw.url, "HEAD", "/openapi.json");
  assert.is(head.status, 200);
  assert.is(head.headers.get("content-length"), String(Buffer.byteLength(res.text)));
  const post = await call(gw.url, "POST", "/openapi.json", { body: {} });
  assert.is(post.status, 405);
  assert.is(post.headers.get("allow"), "GET, HEAD");
  assert.is((post.body as { error: { code: number } }).error.code, 405);
});

test("GET /docs redirects to /docs/, a Swagger UI page that loads only local files", async ({ gw }) => {
  const redirect = await fetch(`${gw.url}/docs`, { redirect: "manual" });
  assert.is(redirect.status, 301);
  assert.is(redirect.headers.get("location"), "docs/");
  const page = await fetch(`${gw.url}/docs`);
  assert.is(page.url, `${gw.url}/docs/`);
  assert.is(page.status, 200);
  assert.is(page.headers.get("content-type"), "text/html; charset=utf-8");
  const policy = page.headers.get("content-security-policy") ?? "";
  for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'"])
    assert.ok(policy.includes(directive), policy);
  const html = await page.text();
  const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
  assert.ok(references.length >= 5, html);
  for (const reference of references) {
    // Relative to the page: no scheme, no host, no CDN.
    assert.not.match(reference, /^(?:[a-z]+:|\/\/)/i);
    const asset = await fetch(new URL(reference, page.url));
    assert.is(asset.status, 200, reference);
    assert.is(asset.headers.get("x-content-type-options"), "nosniff");
    const body = Buffer.from(await asset.arrayBuffer());
    assert.ok(body.length > 0, reference);
  }
  const bundle = await fetch(new URL(references.find((r) => r.startsWith("swagger-ui-bundle.js"))!, page.url));
  assert.is(bundle.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.is(bundle.headers.get("cache-control"), "public, max-age=31536000, immutable");
  const bundled = fs.readFileSync(path.join(ROOT, "node_modules/swagger-ui-dist/swagger-ui-bundle.js"));
  assert.ok(Buffer.from(await bundle.arrayBuffer()).equals(bundled), "the file of swagger-ui-dist, as it is");
  const initializer = await (await fetch(new URL("swagger-initializer.js", page.url))).text();
  assert.match(initializer, /url: "\.\.\/openapi\.json"/);
  assert.match(initializer, /validatorUrl: null/);
  assert.not.match(initializer, /https?:\/\//);
});

test("nothing outside the page's own files is served under /docs/", async ({ gw }) => {
  const attempts = [
    "/docs/../package.json",
    "/docs/%2e%2e/package.json",
    "/docs/..%2fpackage.json",
    "/docs/..%2F..%2F..%2Fpackage.json",
    "/docs/../../../../etc/passwd",
    "/docs//etc/passwd",
    "/docs/./swagger-ui.css",
    "/docs/package.json",
    "/docs/swagger-ui-bundle.js.map",
    "/docs/index.js",
    "/docs/swagger-ui.css/",
    "/docs/constructor",
    "/docs/__proto__",
  ];
  for (const attempt of attempts) {
    const res = await rawRequest(gw.url, "GET", attempt);
    assert.is(res.status, 404, attempt);
    assert.is(res.headers["content-type"], "application/json", attempt);
    assert.is((res.body as { error: { code: number } }).error.code, 404, attempt);
  }
  assert.is((await rawRequest(gw.url, "GET", "/docs/swagger-ui.css")).status, 200);
});

test("a core-only process serves no API docs (its HTTP port has no REST)", async () => {
  const core = await startTestGateway({}, { coreOnly: true });
  try {
    assert.is.not((await call(core.url, "GET", "/openapi.json")).status, 200);
    assert.is.not((await call(core.url, "GET", "/docs/")).status, 200);
  } finally {
    await core.stop();
  }
});

test.run();

/**
 * API discovery on the HTTP port, without a key, where the REST facade runs:
 * - `GET /openapi.json`: the OpenAPI 3.1 document that `npm run generate` writes from the protos
 *   (tools/openapi/, gen/openapi/openapi.json), as it is;
 * - `GET /docs/`: Swagger UI, fully offline: its files come from the `swagger-ui-dist` package,
 *   the page and its initializer are ours and point at the document. `/docs` redirects there.
 * Only the files the page needs are served, looked up by exact name, so no path under /docs/ can
 * reach another file. The page's Content-Security-Policy lets it load and call this origin only.
 *
 * @module
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { sendError } from "../../facade/error-response.js";
import type { PortEndpoint, PortEndpoints } from "./port-endpoints.js";
import { allowGetAndHead, sendAsset, staticAsset as asset, type StaticAsset as Asset } from "./static-assets.js";
import { errorMessage } from "../../wire/errors.js";

const DOCUMENT_FILE = new URL("../../gen/openapi/openapi.json", import.meta.url);

/** The swagger-ui-dist files the page loads, and their content types (a Map: a name is never a prototype key). */
const UI_FILES = new Map([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["index.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["favicon-32x32.png", "image/png"],
  ["favicon-16x16.png", "image/png"],
]);

const HTML = "text/html; charset=utf-8";
const JS = "text/javascript; charset=utf-8";
/** What may change with a deployment is revalidated (ETag); the vendor files are versioned by their URL. */
const REVALIDATE = "no-cache";
const IMMUTABLE = "public, max-age=31536000, immutable";
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function addApiDocsEndpoints(endpoints: PortEndpoints): void {
  const uiPackage = createRequire(import.meta.url).resolve("swagger-ui-dist/package.json");
  const uiDir = path.dirname(uiPackage);
  const { version } = JSON.parse(fs.readFileSync(uiPackage, "utf8")) as { version: string };
  const document = asset(readDocument(), "application/json", REVALIDATE);
  // Built when first asked for: most gateways never serve the page.
  const vendor = new Map<string, Asset>();
  let page: Map<string, Asset> | undefined;
  const pageAssets = (): Map<string, Asset> => (page ??= ownPages(version));

  endpoints.add(
    "/openapi.json",
    serving(() => document),
  );
  endpoints.add("/docs", (req, res) => {
    if (!allowGetAndHead(req, res)) return;
    // Relative, so that the page also works behind a proxy that mounts the gateway under a prefix.
    res.writeHead(301, { location: "docs/", "content-length": 0 });
    res.end();
  });
  endpoints.add(
    "/docs/",
    serving((name) => {
      const own = pageAssets().get(name);
      if (own) return own;
      const contentType = UI_FILES.get(name);
      if (contentType === undefined) return undefined;
      let file = vendor.get(name);
      if (!file) vendor.set(name, (file = asset(fs.readFileSync(path.join(uiDir, name)), contentType, IMMUTABLE)));
      return file;
    }),
  );
}

/** An endpoint answering GET and HEAD with the asset its path names (the part after the prefix), else 404. */
function serving(find: (name: string) => Asset | undefined): PortEndpoint {
  return (req, res) => {
    if (!allowGetAndHead(req, res)) return;
    const pathname = (req.url ?? "/").split("?", 1)[0]!;
    const name = pathname.startsWith("/docs/") ? pathname.slice("/docs/".length) : "";
    const found = find(name);
    if (!found) {
      sendError(res, { status: 404, message: `No file ${pathname} in the API docs` });
      return;
    }
    sendAsset(req, res, found);
  };
}

function readDocument(): Buffer {
  try {
    return fs.readFileSync(DOCUMENT_FILE);
  } catch (err) {
    throw new Error(
      `The OpenAPI document ${DOCUMENT_FILE.pathname} cannot be read (npm run generate writes it): ` +
        `${errorMessage(err)}`,
    );
  }
}

/** The page and its initializer; vendor URLs carry the package version, so a new one is fetched anew. */
function ownPages(version: string): Map<string, Asset> {
  const v = `?v=${encodeURIComponent(version)}`;
  const html = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Model Gateway API</title>
    <link rel="stylesheet" href="swagger-ui.css${v}">
    <link rel="stylesheet" href="index.css${v}">
    <link rel="icon" type="image/png" href="favicon-32x32.png${v}" sizes="32x32">
    <link rel="icon" type="image/png" href="favicon-16x16.png${v}" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="swagger-ui-bundle.js${v}"></script>
    <script src="swagger-initializer.js"></script>
  </body>
</html>
`;
  // No validator badge: it would send the document to validator.swagger.io.
  const initializer = `window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: "../openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
`;
  const index = asset(Buffer.from(html), HTML, REVALIDATE, { "content-security-policy": PAGE_POLICY });
  return new Map([
    ["", index],
    ["index.html", index],
    ["swagger-initializer.js", asset(Buffer.from(initializer), JS, REVALIDATE)],
  ]);
}

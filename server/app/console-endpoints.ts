/**
 * The web console (docs/console.md) at `/ui/`: the single-page app that `npm run build:ui` bundles
 * into ui/dist/, a plain client of /api/v1 that signs in with an API key. The files are read once,
 * on the first request, into a map by name; a request names one of them or, without a file
 * extension, is a page of the app and gets index.html. No path from a request ever reaches the
 * file system, and a path that tries to climb (`..`, any percent-encoding, a backslash) is a 404.
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sendError } from "../../facade/error-response.js";
import type { PortEndpoints } from "./port-endpoints.js";
import { allowGetAndHead, sendAsset, staticAsset, type StaticAsset } from "./static-assets.js";

const DIST_DIR = fileURLToPath(new URL("../../ui/dist/", import.meta.url));

const CONTENT_TYPES = new Map([
  [".html", "text/html; charset=utf-8"],
  [".js", "text/javascript; charset=utf-8"],
  [".css", "text/css; charset=utf-8"],
  [".png", "image/png"],
  [".svg", "image/svg+xml"],
]);

/**
 * The app's own files and its API only: no inline script or style, no other origin, no frames, no
 * form posted anywhere (the sign-in form is handled by script; if script failed, the key could
 * otherwise end up in a URL). `data:` images: the empty favicon that stops a request for one.
 */
const POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const SECURITY_HEADERS = {
  "content-security-policy": POLICY,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
};
/** Fixed file names (a build replaces them in place), so every load revalidates; a 304 is cheap. */
const REVALIDATE = "no-cache";

/** A path segment the map could hold: no climbing, no encoding, no hidden files. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function addConsoleEndpoints(endpoints: PortEndpoints): void {
  let files: Map<string, StaticAsset> | undefined;
  endpoints.add("/ui", (req, res) => {
    if (!allowGetAndHead(req, res)) return;
    // Relative, so that the console also works behind a proxy that mounts the gateway under a prefix.
    res.writeHead(301, { location: "ui/", "content-length": 0 });
    res.end();
  });
  endpoints.add("/ui/", (req, res) => {
    if (!allowGetAndHead(req, res)) return;
    const pathname = (req.url ?? "/").split("?", 1)[0]!;
    // Read again while missing, so that a build after the start is picked up.
    if (!files?.size) files = readDist();
    const found = lookup(files, pathname.slice("/ui/".length));
    if (!found) {
      sendError(
        res,
        {
          status: files.size === 0 ? 503 : 404,
          message:
            files.size === 0 ? "The console is not built: run npm run build:ui" : `No file ${pathname} in the console`,
        },
        SECURITY_HEADERS,
      );
      return;
    }
    sendAsset(req, res, found, SECURITY_HEADERS);
  });
}

/**
 * The file a sub-path names. Pages are routed in the URL's fragment (`#/keys`), so a sub-path
 * without an extension (`/ui/keys`, an old link or a typo) is the app's page, and an asset is
 * found by its own name at any depth (the page links its assets relatively).
 */
function lookup(files: Map<string, StaticAsset>, subPath: string): StaticAsset | undefined {
  const segments = subPath.split("/");
  const last = segments.at(-1)!;
  const allSafe = segments.every(
    (segment, i) => SAFE_NAME.test(segment) || (segment === "" && i === segments.length - 1),
  );
  if (!allSafe) return undefined;
  if (last === "") return files.get("index.html");
  return files.get(last) ?? (path.extname(last) === "" ? files.get("index.html") : undefined);
}

/** The built files by name (empty when ui/dist is missing: the endpoint says how to build it). */
function readDist(): Map<string, StaticAsset> {
  const files = new Map<string, StaticAsset>();
  if (!fs.existsSync(DIST_DIR)) return files;
  for (const entry of fs.readdirSync(DIST_DIR, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES.get(path.extname(entry.name));
    if (!entry.isFile() || !SAFE_NAME.test(entry.name) || contentType === undefined) continue;
    files.set(entry.name, staticAsset(fs.readFileSync(path.join(DIST_DIR, entry.name)), contentType, REVALIDATE));
  }
  return files;
}

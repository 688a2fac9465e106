import fs from "node:fs";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { ROOT } from "./import-graph.js";

/**
 * The documentation stays inside the repository: every Markdown link of the README and
 * docs/ is relative and names a file that exists; a link may point at the gateway a reader runs
 * (localhost), never at another site, which may move or be unreachable where the gateway runs.
 */
const test = suite("architecture: documentation links");

const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<(https?:\/\/[^>]+)>/g;
const LOCAL_SERVER = /^https?:\/\/(localhost|127\.0\.0\.1)(:\d+)?\//;

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith(".md") ? [full] : [];
  });
}

/** Links of `text` that leave the repository or name a missing file, as `target (why)`. */
function brokenLinks(file: string, text: string): string[] {
  const broken: string[] = [];
  for (const match of text.matchAll(LINK)) {
    const target = match[1] ?? match[2]!;
    if (LOCAL_SERVER.test(target)) continue;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) {
      broken.push(`${target} (leaves the repository)`);
      continue;
    }
    const [file_] = target.split("#", 1);
    if (file_ === "") continue;
    const resolved = path.resolve(path.dirname(file), decodeURIComponent(file_!));
    if (!resolved.startsWith(ROOT + path.sep)) broken.push(`${target} (outside the repository)`);
    else if (!fs.existsSync(resolved)) broken.push(`${target} (no such file)`);
  }
  return broken;
}

/** The design notes beside the code: a README.md in a source folder. */
const NOTES_ROOTS = ["server", "facade", "proto", "tools", "ui", "wire", "cmd"];

test("every link of the README, docs/ and the design notes stays in the repository and names a file that exists", () => {
  const notes = NOTES_ROOTS.map((dir) => path.join(ROOT, dir))
    .filter((dir) => fs.existsSync(dir))
    .flatMap(markdownFiles);
  const files = [path.join(ROOT, "README.md"), ...markdownFiles(path.join(ROOT, "docs")), ...notes];
  assert.ok(files.length > 5, "the docs are read");
  const problems = files.flatMap((file) =>
    brokenLinks(file, fs.readFileSync(file, "utf8")).map((link) => `${path.relative(ROOT, file)}: ${link}`),
  );
  assert.equal(problems, []);
});

test("the check catches links out, links up past the root and missing files", () => {
  const file = path.join(ROOT, "docs", "example.md");
  const text =
    "[a](https://example.com/x) [b](../../outside.md) [c](missing.md) [d](architecture.md#layers) [e](#top) <http://localhost:8080/ui/>";
  assert.equal(brokenLinks(file, text), [
    "https://example.com/x (leaves the repository)",
    "../../outside.md (outside the repository)",
    "missing.md (no such file)",
  ]);
});

test.run();

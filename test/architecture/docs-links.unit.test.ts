import fs from "node:fs";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { LAYERED, ROOT, tsFiles } from "./import-graph.js";
import { staleCommentPaths, staleMarkdownPaths } from "./stale-paths.js";

/**
 * The documentation stays inside the repository: every Markdown link of the README and
 * docs/ is relative and names a file that exists; a link may point at the gateway a reader runs
 * (localhost), never at another site, which may move or be unreachable where the gateway runs.
 * A path written in backticks, or in a code comment, names a file or folder that exists
 * (stale-paths.ts).
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
const NOTES_ROOTS = ["server", "facade", "proto", "tools", "ui", "wire", "cmd", "egress", "intern-host"];

/** The README, docs/ and the design notes. */
function documents(): string[] {
  const notes = NOTES_ROOTS.map((dir) => path.join(ROOT, dir))
    .filter((dir) => fs.existsSync(dir))
    .flatMap(markdownFiles);
  const files = [path.join(ROOT, "README.md"), ...markdownFiles(path.join(ROOT, "docs")), ...notes];
  assert.ok(files.length > 5, "the docs are read");
  return files;
}

/** What `check` finds in each file, as `file: finding`. */
function findings(files: string[], check: (file: string, text: string) => string[]): string[] {
  return files.flatMap((file) =>
    check(file, fs.readFileSync(file, "utf8")).map((finding) => `${path.relative(ROOT, file)}: ${finding}`),
  );
}

test(
  "every link of the README, " + "docs/ and the design notes stays in the repository and names a file that exists",
  () => {
    assert.equal(findings(documents(), brokenLinks), []);
  },
);

test("every path the README, docs/ and the design notes write in backticks names a file or folder that exists", () => {
  assert.equal(findings(documents(), staleMarkdownPaths), []);
});

test("every .ts or .md path with a folder in a code comment names a file that exists", () => {
  const sources = [...LAYERED, "test", "bench"].flatMap((dir) => tsFiles(path.join(ROOT, dir)));
  assert.ok(sources.length > 100, "the sources are read");
  assert.equal(findings(sources, staleCommentPaths), []);
});

test("the check catches links out, links up past the root and missing files", () => {
  const file = path.join(ROOT, "docs", "example.md");
  const text =
    "[a](https://example.com/x) [b](../../outside.md) [c](missing.md) " +
    "[d](architecture.md#layers) [e](#top) <http://localhost:8080/ui/>";
  assert.equal(brokenLinks(file, text), [
    "https://example.com/x (leaves the repository)",
    "../../outside.md (outside the repository)",
    "missing.md (no such file)",
  ]);
});

test("the check catches stale backticked paths and leaves what is not a path alone", () => {
  const file = path.join(ROOT, "server", "README.md");
  const text = [
    "`server/engine/gone.ts` `docs/missing.md` `wire/` `engine-deps.ts` `app/README.md` `platform/gone/`",
    "`google/api/annotations.proto` `https://example.com/a.md` `server/*.ts` `server/<kind>/`",
    "`GATEWAY_CONFIG=examples/x.yaml` `/api/v1/models` `npm test -- facade/x.ts` `text/event-stream`",
    "```\nserver/engine/fenced.ts `server/engine/fenced.ts`\n```",
  ].join("\n");
  assert.equal(staleMarkdownPaths(file, text), ["server/engine/gone.ts", "docs/missing.md"]);
});

test("the check catches stale paths in comments, from the root or a parent folder", () => {
  const file = path.join(ROOT, "server", "engine", "inference", "x.ts");
  const text = [
    "// server/engine/gone.ts and providers/provider.ts (server/engine/), routing.ts alone",
    "const a = 1; // see inference/" + "missing.md", // split, or this line would be a stale comment
    'const url = "server/engine/in-a-string.ts";',
  ].join("\n");
  assert.equal(staleCommentPaths(file, text), ["1: server/engine/gone.ts", "2: inference/missing.md"]);
});

test.run();

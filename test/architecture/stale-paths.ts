/**
 * Repository paths named in prose, and those that name nothing: what the docs link test
 * (docs-links.unit.test.ts) holds the Markdown files and the code comments to, so a move that
 * forgets a mention fails a test instead of misleading the next reader.
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./import-graph.js";

/** The repository's top-level folders: a backticked token that starts with one is a path. */
const TOP_FOLDERS = fs
  .readdirSync(ROOT, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules")
  .map((entry) => entry.name);
const PATH_EXTENSION = /\.(ts|tsx|js|md|proto|json|sh|css|html|yaml|yml|sql)$/;
/** Not paths: commands (spaces), URLs, globs, placeholders, elisions, settings (`NAME=value`), API paths. */
const NOT_A_PATH = /\s|:\/\/|[*<>…{}=]|^\//;
/** Where buf looks up a `.proto` import (buf.yaml's modules): `google/api/annotations.proto` is one. */
const PROTO_ROOTS = ["proto", "node_modules/google-proto-files"].map((dir) => path.join(ROOT, dir));
const FENCED_BLOCK = /^```[\s\S]*?^```/gm;
const CODE_SPAN = /`([^`\n]+)`/g;

/**
 * Backticked tokens of a Markdown file that look like repository paths (a `/`, and a known
 * extension or a top-level folder first) and name nothing, from the root or from the file's
 * folder. Fenced blocks are left out: they hold commands and output, not references.
 */
export function staleMarkdownPaths(file: string, text: string): string[] {
  const stale: string[] = [];
  for (const match of text.replace(FENCED_BLOCK, "").matchAll(CODE_SPAN)) {
    const token = match[1]!.trim();
    if (!token.includes("/") || NOT_A_PATH.test(token)) continue;
    if (!PATH_EXTENSION.test(token) && !TOP_FOLDERS.some((folder) => token.startsWith(`${folder}/`))) continue;
    const bases = token.endsWith(".proto") ? [ROOT, path.dirname(file), ...PROTO_ROOTS] : [ROOT, path.dirname(file)];
    if (!named(token, bases)) stale.push(token);
  }
  return stale;
}

const COMMENT = /^\s*(?:\/\/|\/\*\*?|\*)(.*)$|\s\/\/\s(.*)$/;
const COMMENT_PATH = /(?<![\w./@-])((?:\.{0,2}[\w-][\w.-]*\/)+[\w.-]+\.(?:ts|md))(?![\w/])/g;

/**
 * Paths of `.ts` and `.md` files with a `/` in the comments of a source file that name nothing,
 * from the root, the file's folder or one of its parents: a comment in test/engine/ may name
 * test/support/suite.ts support/suite.ts.
 */
export function staleCommentPaths(file: string, text: string): string[] {
  const bases: string[] = [];
  for (let dir = path.dirname(file); dir.startsWith(ROOT); dir = path.dirname(dir)) bases.push(dir);
  const stale: string[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    const comment = COMMENT.exec(line);
    if (!comment) continue;
    for (const match of (comment[1] ?? comment[2]!).matchAll(COMMENT_PATH))
      if (!named(match[1]!, bases)) stale.push(`${index + 1}: ${match[1]}`);
  }
  return stale;
}

/** The path exists from one of `bases`, or git ignores it (generated output, absent from a fresh clone). */
function named(token: string, bases: string[]): boolean {
  if (bases.some((base) => fs.existsSync(path.join(base, token)))) return true;
  try {
    execFileSync("git", ["check-ignore", "-q", "--no-index", path.join(bases[0]!, token)], { cwd: ROOT });
    return true;
  } catch {
    return false;
  }
}

import fs from "node:fs";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { LAYERED, ROOT } from "./import-graph.js";

/**
 * The configuration reference lists exactly the settings the code reads: a setting
 * added to the code without a row, or a row left behind by a removed setting, fails here.
 * Settings are environment variables: `GATEWAY_*`, and the few plain ones every server has.
 */
const test = suite("architecture: configuration reference");

/** Where the reference table lives. */
const REFERENCE = "docs/configuration.md";
const NAME = "GATEWAY_[A-Z0-9_]+|PORT|GRPC_PORT|HOST|DATABASE_URL|LOG_LEVEL";
/** A name read from the environment (`env.X`, `process.env.X`) or written as a string literal, as config.ts does. */
const READ = new RegExp(`(?:env\\.|["'\`])(${NAME})\\b`, "g");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

function settingsInCode(): string[] {
  const names = new Set<string>();
  for (const folder of LAYERED) {
    for (const file of sourceFiles(path.join(ROOT, folder))) {
      for (const match of fs.readFileSync(file, "utf8").matchAll(READ)) names.add(match[1]!);
    }
  }
  return [...names].sort();
}

/** The names in the first cell of every table row of the reference (a row may name several). */
function settingsInReference(): string[] {
  const names = new Set<string>();
  for (const line of fs.readFileSync(path.join(ROOT, REFERENCE), "utf8").split("\n")) {
    const firstCell = /^\|([^|]+)\|/.exec(line)?.[1] ?? "";
    for (const match of firstCell.matchAll(new RegExp(`\`(${NAME})\``, "g"))) names.add(match[1]!);
  }
  return [...names].sort();
}

test(`${REFERENCE} lists every setting the code reads, and no other`, () => {
  const code = settingsInCode();
  const reference = settingsInReference();
  assert.ok(code.length > 40, "the code's settings were found");
  assert.equal(
    code.filter((name) => !reference.includes(name)),
    [],
    "read by the code, missing from the reference",
  );
  assert.equal(
    reference.filter((name) => !code.includes(name)),
    [],
    "in the reference, read by nothing",
  );
});

test.run();

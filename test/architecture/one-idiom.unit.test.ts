import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as assert from "uvu/assert";
import { suite } from "../support/suite.js";
import { ROOT, tsFiles } from "./import-graph.js";

/**
 * Jobs with one way to do them across the code, so that a reader learns each once: a caught value
 * is read with `errorMessage` (wire/errors.ts), never with a cast to Error (a thrown string or
 * object has no `.message`) or an inline copy of the test.
 */
const test = suite("architecture: one idiom per job");

const FOLDERS = ["cmd", "egress", "facade", "intern-host", "server", "tools", "wire"];
const INLINE = [/\b(\w+) instanceof Error \? \1\.message : String\(\1\)/, /\(\w+ as Error\)\.message/];

function offenders(root: string): string[] {
  return FOLDERS.flatMap((folder) => tsFiles(path.join(root, folder)))
    .filter((file) => INLINE.some((pattern) => pattern.test(fs.readFileSync(file, "utf8"))))
    .map((file) => path.relative(root, file))
    .filter((file) => file !== "wire/errors.ts");
}

test("a caught value is read with errorMessage, nowhere inline", () => {
  assert.equal(offenders(ROOT), []);
});

test("the check finds an inline reading", () => {
  const planted = fs.mkdtempSync(path.join(os.tmpdir(), "idiom-"));
  try {
    fs.mkdirSync(path.join(planted, "server"), { recursive: true });
    fs.writeFileSync(path.join(planted, "server/a.ts"), "log.warn({ err: (err as Error).message });\n");
    fs.writeFileSync(path.join(planted, "server/b.ts"), "const text = e instanceof Error ? e.message : String(e);\n");
    fs.writeFileSync(path.join(planted, "server/c.ts"), "const text = errorMessage(e);\n");
    assert.equal(offenders(planted).sort(), ["server/a.ts", "server/b.ts"]);
  } finally {
    fs.rmSync(planted, { recursive: true, force: true });
  }
});

test.run();

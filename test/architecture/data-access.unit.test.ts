import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ROOT, tsFiles } from "./import-graph.js";

/**
 * The data-access rule of docs/architecture.md ("Data access"): in the folders whose table families
 * follow it, SQL is written only in the family's store (`<family>-store.ts`, `<family>-store-<part>.ts`);
 * every other file calls the store's named functions. Sequelize model calls are not SQL text and
 * are not looked for.
 */
const test = suite("architecture: data access");

/** The folders under server/ whose SQL lives in stores; a family joins once its SQL has moved. */
const STORE_FOLDERS = ["batches", "files", "interns", "videos"];
const STORE = /^[a-z]+(?:-[a-z]+)*-store(?:-[a-z]+)*\.ts$/;
/** A statement sent by hand: `sequelize.query(…)` or `.query<Row>(…)` on any name, or the QueryTypes it needs. */
const RUNS_SQL = /\.query\s*[<(]|\bQueryTypes\b/;

/** Files of `folders` (under `root`/server) that run SQL without being a store. */
function sqlOutsideStores(root: string, folders: string[]): string[] {
  return folders
    .flatMap((folder) => tsFiles(path.join(root, "server", folder)))
    .filter((file) => !STORE.test(path.basename(file)) && RUNS_SQL.test(fs.readFileSync(file, "utf8")))
    .map((file) => path.relative(root, file))
    .sort();
}

test("the store folders hold stores that run SQL", () => {
  for (const folder of STORE_FOLDERS) {
    const stores = tsFiles(path.join(ROOT, "server", folder)).filter((file) => STORE.test(path.basename(file)));
    assert.ok(stores.some((file) => RUNS_SQL.test(fs.readFileSync(file, "utf8"))), `server/${folder} has a store`);
  }
});

test("no SQL outside the stores of batches, files, interns and videos", () => {
  assert.equal(sqlOutsideStores(ROOT, STORE_FOLDERS), []);
});

test("the check fails on a planted query in a service file", () => {
  const planted = fs.mkdtempSync(path.join(os.tmpdir(), "data-access-"));
  try {
    fs.mkdirSync(path.join(planted, "server/files"), { recursive: true });
    fs.writeFileSync(path.join(planted, "server/files/file-store.ts"), 'await sequelize.query("SELECT 1");\n');
    fs.writeFileSync(path.join(planted, "server/files/file-store-parts.ts"), "await sequelize.query<Row>(sql);\n");
    fs.writeFileSync(path.join(planted, "server/files/files-service.ts"), 'await deps.sequelize.query("DELETE FROM files");\n');
    fs.writeFileSync(path.join(planted, "server/files/file-wire.ts"), 'import { QueryTypes } from "sequelize";\n');
    assert.equal(sqlOutsideStores(planted, ["files"]), ["server/files/file-wire.ts", "server/files/files-service.ts"]);
  } finally {
    fs.rmSync(planted, { recursive: true, force: true });
  }
});

test.run();

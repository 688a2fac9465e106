import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { ROOT, tsFiles } from "./import-graph.js";

/**
 * The data-access rule of docs/architecture.md ("Data access"): under server/, SQL is written only
 * in a family's store (`<family>-store.ts`, `<family>-store-<part>.ts`); every other file calls the
 * store's named functions. Sequelize model calls are not SQL text and are not looked for.
 */
const test = suite("architecture: data access");

/** Folders under server/ the rule does not apply to, and why. */
const EXEMPT_FOLDERS: Record<string, string> = {
  "platform/db": "the connection, the start-up locks and the migrations: SQL of the schema, of no one family",
};
/** Files that talk to the database without touching a table, and why. */
const EXEMPT_FILES: Record<string, string> = {
  "server/app/readiness.ts": "the readiness probe's `SELECT 1` asks whether the database answers",
};
/** Folders whose families run SQL, each through its store: the check has something to find. */
const SQL_FAMILIES = [
  "services/activity",
  "engine/admission",
  "services/analytics",
  "services/batches",
  "engine/catalog",
  "services/files",
  "engine/governance",
  "services/interns",
  "services/keys",
  "services/members",
  "engine/usage",
  "services/videos",
];

const STORE = /^[a-z]+(?:-[a-z]+)*-store(?:-[a-z]+)*\.ts$/;
/** A statement sent by hand: `sequelize.query(…)` or `.query<Row>(…)` on any name, or the QueryTypes it needs. */
const RUNS_SQL = /\.query\s*[<(]|\bQueryTypes\b/;
const runsSql = (file: string) => RUNS_SQL.test(fs.readFileSync(file, "utf8"));

/** Files under `root`/server that run SQL without being a store, outside the exempt folders and files. */
function sqlOutsideStores(root: string): string[] {
  const skipped = Object.keys(EXEMPT_FOLDERS).map((folder) => path.join(root, "server", folder) + path.sep);
  return tsFiles(path.join(root, "server"))
    .filter((file) => !skipped.some((folder) => file.startsWith(folder)))
    .map((file) => path.relative(root, file))
    .filter((file) => !(file in EXEMPT_FILES) && !STORE.test(path.basename(file)) && runsSql(path.join(root, file)))
    .sort();
}

test("the families that run SQL have stores that do", () => {
  for (const folder of SQL_FAMILIES) {
    const stores = tsFiles(path.join(ROOT, "server", folder)).filter((file) => STORE.test(path.basename(file)));
    assert.ok(stores.some(runsSql), `server/${folder} has a store`);
  }
});

test("no SQL outside the stores of server/", () => {
  assert.equal(sqlOutsideStores(ROOT), []);
});

test("every exempt file still talks to the database (else its exemption goes)", () => {
  for (const file of Object.keys(EXEMPT_FILES)) assert.ok(runsSql(path.join(ROOT, file)), file);
});

test("the check fails on a planted query in a service file", () => {
  const planted = fs.mkdtempSync(path.join(os.tmpdir(), "data-access-"));
  const plant = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(planted, file)), { recursive: true });
    fs.writeFileSync(path.join(planted, file), text);
  };
  try {
    plant("server/services/files/file-store.ts", 'await sequelize.query("SELECT 1");\n');
    plant("server/services/files/file-store-parts.ts", "await sequelize.query<Row>(sql);\n");
    plant("server/services/files/files-service.ts", 'await deps.sequelize.query("DELETE FROM files");\n');
    plant("server/services/files/file-view.ts", 'import { QueryTypes } from "sequelize";\n');
    plant(
      "server/services/workspaces/nested/workspace-fields.ts",
      'await sequelize.query("UPDATE workspaces SET name = 1");\n',
    );
    plant("server/platform/db/migrations/0001-foundation.ts", 'await sequelize.query("CREATE TABLE t ()");\n');
    plant("server/engine/usage/usage-store.ts", 'await sequelize.query("SELECT 1");\n');
    plant("server/engine/usage/settlement-writer.ts", 'await client.query({ name: "gateway_settle", text });\n');
    assert.equal(sqlOutsideStores(planted), [
      "server/engine/usage/settlement-writer.ts",
      "server/services/files/file-view.ts",
      "server/services/files/files-service.ts",
      "server/services/workspaces/nested/workspace-fields.ts",
    ]);
  } finally {
    fs.rmSync(planted, { recursive: true, force: true });
  }
});

test.run();

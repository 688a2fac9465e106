import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { importGraph, violations, type ImportGraph } from "./import-graph.js";

/**
 * The engine has one face (server/engine/README.md): at run time the services reach it only
 * through server/engine/index.ts, and no engine module imports that file back (it would load the
 * whole engine from inside it). Type-only imports may name the module that declares the type:
 * they are erased before anything runs.
 */
const test = suite("architecture: the engine's face");

const FACE = "server/engine/index.ts";
const inEngine = (file: string) => file.startsWith("server/engine/");
const inServices = (file: string) => file.startsWith("server/services/");

function faceViolations(modules: ImportGraph): string[] {
  return [
    ...violations(modules, inServices, (t) => !inEngine(t) || t === FACE),
    ...violations(modules, inEngine, (t) => t !== FACE),
  ];
}

test("services import the engine only through server/engine/index.ts, and the engine never imports it", () => {
  assert.equal(faceViolations(importGraph(undefined, ["server"], { typeOnly: false })), []);
});

test(
  "the check catches a service reaching past the face and an engine module importing it, " + "not a type-only import",
  () => {
    const planted = fs.mkdtempSync(path.join(os.tmpdir(), "engine-face-"));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(planted, file)), { recursive: true });
        fs.writeFileSync(path.join(planted, file), text);
      };
      write("server/engine/index.ts", 'export { e } from "./usage/e.js";\n');
      write("server/engine/usage/e.ts", "export const e = 1;\nexport type E = number;\n");
      write("server/engine/usage/back.ts", 'import { e } from "../index.js";\nexport const back = e;\n');
      write("server/services/keys/through.ts", 'import { e } from "../../engine/index.js";\nexport const t = e;\n');
      write("server/services/keys/past.ts", 'import { e } from "../../engine/usage/e.js";\nexport const p = e;\n');
      write("server/services/keys/typed.ts", 'import type { E } from "../../engine/usage/e.js";\nexport let x: E;\n');
      const graph = importGraph(planted, ["server"], { typeOnly: false });
      assert.equal(faceViolations(graph), [
        "server/services/keys/past.ts → server/engine/usage/e.ts",
        "server/engine/usage/back.ts → server/engine/index.ts",
      ]);
    } finally {
      fs.rmSync(planted, { recursive: true, force: true });
    }
  },
);

test.run();

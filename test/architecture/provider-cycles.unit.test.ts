import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as assert from "uvu/assert";
import { suite } from "../support/suite.js";
import { cycles, importGraph } from "./import-graph.js";

/**
 * The provider files (server/engine/providers/) form no import cycle, counting type-only imports:
 * the registry imports every adapter, so an adapter that named anything of the registry, even a
 * type, tied every provider file into one cycle. The kind names live in provider-kind.ts and the
 * Provider interface in provider-api.ts for that reason. The layer rules (layers.unit.test.ts)
 * count only the imports that load a module.
 */
const test = suite("architecture: provider files");

const PROVIDERS = "server/engine/providers";

test("the provider files form no import cycle, type-only imports included", () => {
  const graph = importGraph(undefined, [PROVIDERS]);
  assert.ok(graph.size > 40, `only ${graph.size} files read under ${PROVIDERS}`);
  assert.equal(cycles(graph), []);
});

test("the check sees a cycle made of type-only imports", () => {
  const planted = fs.mkdtempSync(path.join(os.tmpdir(), "provider-cycles-"));
  try {
    fs.mkdirSync(path.join(planted, PROVIDERS, "kind"), { recursive: true });
    fs.writeFileSync(
      path.join(planted, PROVIDERS, "registry.ts"),
      'import { kindProvider } from "./kind/provider.js";\n' +
        'export type Kind = "kind";\nexport const all = [kindProvider];\n',
    );
    fs.writeFileSync(
      path.join(planted, PROVIDERS, "kind/provider.ts"),
      'import type { Kind } from "../registry.js";\nexport const kindProvider: { kind: Kind } = { kind: "kind" };\n',
    );
    assert.equal(cycles(importGraph(planted, [PROVIDERS])), [
      [`${PROVIDERS}/kind/provider.ts`, `${PROVIDERS}/registry.ts`],
    ]);
    assert.equal(cycles(importGraph(planted, [PROVIDERS], { typeOnly: false })), []);
  } finally {
    fs.rmSync(planted, { recursive: true, force: true });
  }
});

test.run();

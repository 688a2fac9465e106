import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { allServices } from "../../wire/services.js";
import { cycles, importGraph, ROOT, violations, type ImportGraph } from "./import-graph.js";

/**
 * The layers of the architecture, checked on every run (no gateway, no database): gen/ → wire/ →
 * server/platform → server/engine → server/services → server/app; facade/ stands on gen/ and wire/
 * alone; the intern host program (intern-host/), a process of its own, stands on wire/ (its
 * protocol with the gateway, the SSE reader) and egress/ (the destination guard, the pinned
 * lookup) alone, egress/ on wire/, and the server imports nothing of the host; tools/ (build-time
 * generators) stands on gen/, wire/ and facade/,
 * and only cmd/ imports it; cmd/ composes everything and nothing imports it; ui/ (the web console, a
 * client of the REST API) stands alone, and the gateway serves its built files without importing
 * it. No module imports itself back. docs/architecture.md draws the house.
 */
const test = suite("architecture: layers");

const under = (folder: string) => (file: string) => file.startsWith(`${folder}/`);
/**
 * `server/services/keys/keys-service.ts` → `server/services/keys`,
 * `server/services/interns/vault/vault-service.ts` → `server/services/interns`;
 * `server/platform/config.ts` → `server`.
 */
const folderOf = (file: string) =>
  file
    .split("/")
    .slice(0, Math.min(3, file.split("/").length - 1))
    .join("/");

/** The import graph between server/'s folders (its top-level files count as one folder, `server`). */
function folderGraph(modules: ImportGraph): ImportGraph {
  const folders: ImportGraph = new Map();
  for (const [from, targets] of modules) {
    if (!under("server")(from)) continue;
    const edges = folders.get(folderOf(from)) ?? new Set<string>();
    for (const target of targets)
      if (under("server")(target) && folderOf(target) !== folderOf(from)) edges.add(folderOf(target));
    folders.set(folderOf(from), edges);
  }
  return folders;
}

/** Where the core's services are composed: it loads every implementation the gateway serves. */
const COMPOSITION = "server/app/services.ts";
const API_SERVICES = new Set(allServices.map((service) => service.name));

/** The services of the API a module implements (`ServiceImpl<typeof KeysService>`, also inside a `Pick<…>`). */
function implementedServices(file: string, root = ROOT): string[] {
  return [...fs.readFileSync(path.join(root, file), "utf8").matchAll(/\bServiceImpl<typeof (\w+)>/g)]
    .map((match) => match[1]!)
    .filter((name) => API_SERVICES.has(name));
}

/**
 * The folders under server/ that implement a service of the API (what server/platform/ must not know),
 * read from the source rather than listed by hand: the folders of the modules the composition
 * loads that implement one. A new service folder is in it as soon as the gateway serves it.
 */
function serviceFolders(modules: ImportGraph, root = ROOT): string[] {
  const implementations = [...(modules.get(COMPOSITION) ?? [])].filter(
    (file) => under("server")(file) && implementedServices(file, root).length > 0,
  );
  return [...new Set(implementations.map(folderOf))].sort();
}

const graph = importGraph();
const runtimeGraph = importGraph(undefined, undefined, { typeOnly: false });
const SERVICE_FOLDERS = serviceFolders(runtimeGraph);

test("the graph is read: every layer has modules", () => {
  for (const folder of ["cmd", "egress", "facade", "intern-host", "server", "tools", "ui", "wire"])
    assert.ok([...graph.keys()].some(under(folder)), folder);
});

test("no import cycle between modules (imports that load a module; types alone order nothing)", () => {
  assert.equal(cycles(runtimeGraph), []);
});

test("no import cycle between the folders of server/ (its top-level files count as one folder)", () => {
  assert.equal(cycles(folderGraph(runtimeGraph)), []);
});

test("facade/ imports only gen/, wire/ and itself", () => {
  assert.equal(
    violations(graph, under("facade"), (t) => under("gen")(t) || under("wire")(t) || under("facade")(t)),
    [],
  );
});

test("wire/ imports only gen/ and itself", () => {
  assert.equal(
    violations(graph, under("wire"), (t) => under("gen")(t) || under("wire")(t)),
    [],
  );
});

test("tools/ (build-time generators) imports only gen/, wire/, facade/ and itself", () => {
  assert.equal(
    violations(
      graph,
      under("tools"),
      (t) => under("gen")(t) || under("wire")(t) || under("facade")(t) || under("tools")(t),
    ),
    [],
  );
});

test("only cmd/ imports tools/: the running gateway does not depend on its generators", () => {
  assert.equal(
    violations(
      graph,
      (f) => !under("cmd")(f) && !under("tools")(f),
      (t) => !under("tools")(t),
    ),
    [],
  );
});

test("ui/ (the web console) imports nothing of the project outside ui/, and nothing imports ui/", () => {
  assert.equal(violations(graph, under("ui"), under("ui")), []);
  assert.equal(
    violations(
      graph,
      (f) => !under("ui")(f),
      (t) => !under("ui")(t),
    ),
    [],
  );
  assert.ok(graph.has("ui/src/pages/keys.tsx"), "the console's .tsx modules are read");
});

test("the service folders hold every implementation of an API service, and every service has one", () => {
  const implementations = [...graph.keys()]
    .filter(under("server"))
    .map((file) => ({ file, services: implementedServices(file) }));
  assert.equal(
    implementations
      .filter(({ services, file }) => services.length > 0 && !SERVICE_FOLDERS.includes(folderOf(file)))
      .map(({ file }) => file),
    [],
  );
  const implemented = new Set(implementations.flatMap(({ services }) => services));
  assert.equal(
    [...API_SERVICES].filter((name) => !implemented.has(name)),
    [],
  );
});

/** The kinds of folder under server/, in layer order: each may import the ones before it. */
const KINDS = ["server/platform", "server/engine", "server/services", "server/app"];
/**
 * What the intern host program may import besides itself: it runs as another process, built from
 * what it shares with the gateway, never from the gateway's own modules.
 */
const FOR_THE_HOST = ["wire", "egress"];
/** What egress/ (the outbound safety rules the server and the host share) may import besides itself. */
const FOR_EGRESS = ["wire"];

/**
 * Imports from one kind of server/ into a later one, from the host or egress/ into anything but
 * what they share, or from the server into the host.
 */
function layerViolations(modules: ImportGraph): string[] {
  const found = KINDS.flatMap((kind, i) =>
    violations(modules, under(kind), (t) => !KINDS.slice(i + 1).some((later) => under(later)(t))),
  );
  found.push(
    ...violations(
      modules,
      under("intern-host"),
      (t) => under("intern-host")(t) || FOR_THE_HOST.some((folder) => under(folder)(t)),
    ),
  );
  found.push(
    ...violations(modules, under("egress"), (t) => under("egress")(t) || FOR_EGRESS.some((folder) => under(folder)(t))),
  );
  found.push(...violations(modules, under("server"), (t) => !under("intern-host")(t)));
  return found;
}

test("server/ holds its four kinds and nothing else: app, engine, platform, services", () => {
  const entries = fs
    .readdirSync(path.join(ROOT, "server"))
    .filter((name) => name !== "README.md")
    .sort();
  assert.equal(entries, KINDS.map((kind) => kind.slice("server/".length)).sort());
});

test(
  "the platform imports no engine, the engine no service, the services not the composition; " +
    "the host and egress/ only what they share; the server nothing of the host",
  () => {
    assert.equal(layerViolations(graph), []);
  },
);

test("nothing imports cmd/ (entry points compose; they are not composed)", () => {
  assert.equal(
    violations(
      graph,
      (f) => !under("cmd")(f),
      (t) => !under("cmd")(t),
    ),
    [],
  );
});

test("the checks fail on a planted cycle and a planted upward import", () => {
  const planted = fs.mkdtempSync(path.join(os.tmpdir(), "architecture-"));
  try {
    fs.mkdirSync(path.join(planted, "server/platform/rpc"), { recursive: true });
    fs.mkdirSync(path.join(planted, "server/services/keys"), { recursive: true });
    fs.mkdirSync(path.join(planted, "facade"), { recursive: true });
    fs.writeFileSync(
      path.join(planted, "server/platform/rpc/a.ts"),
      'import { b } from "../../services/keys/b.js";\nexport const a = 1;\n',
    );
    fs.writeFileSync(
      path.join(planted, "server/services/keys/b.ts"),
      'import { a } from "../../platform/rpc/a.js";\nexport const b = 2;\n',
    );
    fs.writeFileSync(path.join(planted, "facade/f.ts"), 'import { a } from "../server/platform/rpc/a.js";\n');
    const plantedGraph = importGraph(planted, ["facade", "server"], { typeOnly: false });
    assert.equal(cycles(plantedGraph), [["server/platform/rpc/a.ts", "server/services/keys/b.ts"]]);
    assert.equal(cycles(folderGraph(plantedGraph)), [["server/platform/rpc", "server/services/keys"]]);
    assert.equal(
      violations(plantedGraph, under("facade"), (t) => under("gen")(t) || under("wire")(t) || under("facade")(t)),
      ["facade/f.ts → server/platform/rpc/a.ts"],
    );
    assert.equal(layerViolations(plantedGraph), ["server/platform/rpc/a.ts → server/services/keys/b.ts"]);
    fs.mkdirSync(path.join(planted, "server/engine/usage"), { recursive: true });
    fs.mkdirSync(path.join(planted, "intern-host"), { recursive: true });
    fs.mkdirSync(path.join(planted, "egress"), { recursive: true });
    fs.mkdirSync(path.join(planted, "wire"), { recursive: true });
    fs.writeFileSync(
      path.join(planted, "server/engine/usage/u.ts"),
      'import { b } from "../../services/keys/b.js";\nimport { a } from "../../platform/rpc/a.js";\n',
    );
    fs.writeFileSync(path.join(planted, "wire/w.ts"), "export const w = 1;\n");
    fs.mkdirSync(path.join(planted, "server/platform/workers"), { recursive: true });
    fs.writeFileSync(
      path.join(planted, "server/platform/workers/w.ts"),
      'import { costUsd } from "../../engine/money/money.js";\n',
    );
    fs.writeFileSync(
      path.join(planted, "egress/e.ts"),
      'import { w } from "../wire/w.js";\nimport { a } from "../server/platform/rpc/a.js";\n' +
        'import { h } from "../intern-host/h.js";\n',
    );
    fs.writeFileSync(
      path.join(planted, "intern-host/h.ts"),
      'import { b } from "../server/services/keys/b.js";\nimport { a } from "../server/platform/rpc/a.js";\n' +
        'import { w } from "../wire/w.js";\nimport { e } from "../egress/e.js";\n',
    );
    fs.writeFileSync(
      path.join(planted, "server/services/keys/c.ts"),
      'import { h } from "../../../intern-host/h.js";\n',
    );
    const more = importGraph(planted, ["egress", "intern-host", "server", "wire"], { typeOnly: false });
    assert.equal(layerViolations(more), [
      "server/platform/rpc/a.ts → server/services/keys/b.ts",
      "server/platform/workers/w.ts → server/engine/money/money.ts",
      "server/engine/usage/u.ts → server/services/keys/b.ts",
      "intern-host/h.ts → server/platform/rpc/a.ts",
      "intern-host/h.ts → server/services/keys/b.ts",
      "egress/e.ts → intern-host/h.ts",
      "egress/e.ts → server/platform/rpc/a.ts",
      "server/services/keys/c.ts → intern-host/h.ts",
    ]);
  } finally {
    fs.rmSync(planted, { recursive: true, force: true });
  }
});

test.run();

import fs from "node:fs";
import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { ROOT } from "./import-graph.js";
import { renderRouteMap, ROUTE_MAP } from "./route-map.js";

/** The generated route map is current (run `npm run docs:routes` after changing a route or a service). */
const test = suite("architecture: route map");

test(`${ROUTE_MAP} is what the protos and server/app/services.ts give`, () => {
  const written = fs.readFileSync(path.join(ROOT, ROUTE_MAP), "utf8");
  assert.ok(written === renderRouteMap(), `${ROUTE_MAP} is stale: run npm run docs:routes`);
});

test("every route names an implementing file that exists", () => {
  const rows = renderRouteMap()
    .split("\n")
    .filter((line) => line.startsWith("| `"));
  assert.ok(rows.length >= 90, `${rows.length} routes`);
  for (const row of rows) {
    const file = /\]\(\.\.\/([^)]+)\)/.exec(row)?.[1];
    assert.ok(file && fs.existsSync(path.join(ROOT, file)), row);
  }
});

test.run();

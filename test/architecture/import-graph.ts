import fs from "node:fs";
import path from "node:path";

/**
 * The project's own import graph, read from the sources (no TypeScript compiler, no database):
 * every relative `import`/`export … from` and dynamic `import()` of a `.ts`/`.tsx` file under the
 * layered folders. Type-only imports count for the layer rules (a layer may not even name a type
 * of a layer above it) and are marked, since they are erased before anything runs: a cycle made
 * of them alone orders no loading. Paths are relative to the repository root, e.g.
 * `server/platform/rpc/auth.ts`.
 */
export const ROOT = path.resolve(import.meta.dirname, "../..");
export const LAYERED = ["cmd", "egress", "facade", "intern-host", "server", "tools", "ui", "wire"];

export type ImportGraph = Map<string, Set<string>>;

/** `import type {…} from`, `export type {…} from`: erased at run time. */
const TYPE_ONLY = /^(?:import|export)\s+type\s/;
/** `import … from "./x.js"`, `export … from "./x.js"`: the clause (group 1) and the path (group 2). */
const IMPORT_FROM = /(?:^|[\s;])((?:import|export)\s[^'"]*?)from\s*["'](\.{1,2}\/[^"']+)["']/;
/** `import("./x.js")`: the path (group 3 of SPECIFIER). */
const DYNAMIC_IMPORT = /import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/;
/** `import "./x.js"`, for its effects alone: the path (group 4 of SPECIFIER). */
const BARE_IMPORT = /^import\s+["'](\.{1,2}\/[^"']+)["']/;
const SPECIFIER = new RegExp(`${IMPORT_FROM.source}|${DYNAMIC_IMPORT.source}|${BARE_IMPORT.source}`, "gm");

/** Every import (`typeOnly: false`: only those that load a module when it runs). */
export function importGraph(root = ROOT, folders = LAYERED, { typeOnly = true } = {}): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const folder of folders) {
    for (const file of tsFiles(path.join(root, folder))) {
      const from = path.relative(root, file);
      const targets = new Set<string>();
      for (const match of fs.readFileSync(file, "utf8").matchAll(SPECIFIER)) {
        if (!typeOnly && match[1] && TYPE_ONLY.test(match[1].trim())) continue;
        const specifier = match[2] ?? match[3] ?? match[4]!;
        targets.add(path.relative(root, resolveSource(path.resolve(path.dirname(file), specifier))));
      }
      graph.set(from, targets);
    }
  }
  return graph;
}

/** The source file an import names: `./x.js` is `./x.ts`, or `./x.tsx` in the console (ui/). */
function resolveSource(target: string): string {
  const stem = target.replace(/\.js$/, "");
  if (stem === target) return target;
  return fs.existsSync(`${stem}.tsx`) && !fs.existsSync(`${stem}.ts`) ? `${stem}.tsx` : `${stem}.ts`;
}

/** The `.ts` and `.tsx` files below `dir` (declaration files aside), in every subfolder. */
export function tsFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** Every cycle's members (strongly connected components of more than one module, or a module importing itself). */
export function cycles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Imports that break a rule: `from` may import only what `allowed` accepts. */
export function violations(
  graph: ImportGraph,
  applies: (from: string) => boolean,
  allowed: (target: string) => boolean,
): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    if (!applies(from)) continue;
    for (const target of targets) if (!allowed(target)) out.push(`${from} → ${target}`);
  }
  return out.sort();
}

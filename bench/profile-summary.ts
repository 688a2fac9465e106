import fs from "node:fs";

/**
 * `tsx bench/profile-summary.ts <file.cpuprofile> [top] [skip seconds]`: where a V8 CPU profile's time went, as
 * self time per function and per source file (node_modules grouped by package), so a benchmark's
 * notes can say where the remaining time goes without opening DevTools. Samples of the first
 * `skip` seconds (start-up, module loading) can be left out.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg, skipArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]");
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const skipUs = Number(skipArg ?? 0) * 1e6;
const selfUs = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at >= skipUs) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});

function place(url: string): string {
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url === "") return "(native/vm)";
  if (url.startsWith("node:")) return url;
  const root = url.indexOf("/main/");
  return root >= 0 ? url.slice(root + "/main/".length) : url;
}

const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const nameOf = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"} ${place(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
/** Time with callees, for the project's own functions only (where a change would go). */
const inclusive = new Map<string, number>();
const functions = new Map<string, number>();
const files = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { callFrame } = byId.get(id)!;
  if (callFrame.functionName === "(idle)") continue;
  const where = place(callFrame.url);
  add(functions, `${callFrame.functionName || "(anonymous)"} ${where}:${callFrame.lineNumber + 1}`, us);
  add(files, where, us);
}
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at)!;
    if (node.callFrame.functionName === "(idle)") break;
    const url = node.callFrame.url;
    if (url.includes("node_modules") || url.startsWith("node:") || url === "") continue;
    const key = nameOf(node);
    if (seen.has(key)) continue;
    seen.add(key);
    add(inclusive, key, us);
  }
}
/** Percentages are of busy time: idle samples say how loaded the run was, not where work went. */
const total = [...files.values()].reduce((a, b) => a + b, 0);
const idle = [...selfUs]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)")
  .reduce((a, [, us]) => a + us, 0);
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
  }
};
console.log(`busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms; percentages are of busy time`);
print("self time by file or package", files);
print("self time by function", functions);
print("total time (with callees) of the project's own functions", inclusive);

import fs from "node:fs";
import path from "node:path";
import * as esbuild from "esbuild";

/**
 * `npm run build:ui [out-dir]`: bundles the console (ui/src/) into `out-dir` (default ui/dist/,
 * which is committed and served by the gateway at /ui/). The output is reproducible: fixed file
 * names (index.html, app.js, app.css), no timestamps, no source maps, no comments, so CI builds into
 * a temporary folder and fails when the result differs from ui/dist/ (.ci/run).
 */
const UI = import.meta.dirname;
const outDir = path.resolve(process.argv[2] ?? path.join(UI, "dist"));
const OUTPUTS = ["index.html", "app.js", "app.css"];

await esbuild.build({
  entryPoints: { app: path.join(UI, "src/main.tsx") },
  outdir: outDir,
  bundle: true,
  format: "esm",
  target: "es2022",
  platform: "browser",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  charset: "utf8",
  jsx: "automatic",
  jsxImportSource: "preact",
  // Inside ui/ alone: the console is a client of the REST API, never of the gateway's code.
  absWorkingDir: UI,
  logLevel: "warning",
});
fs.copyFileSync(path.join(UI, "src/index.html"), path.join(outDir, "index.html"));

// A file a former build wrote and this one did not would be served stale.
for (const entry of fs.readdirSync(outDir, { withFileTypes: true })) {
  if (entry.isFile() && !OUTPUTS.includes(entry.name)) fs.rmSync(path.join(outDir, entry.name));
}
const shown = path.relative(process.cwd(), outDir);
console.log(`console built into ${shown.startsWith("..") ? outDir : shown}: ${OUTPUTS.join(", ")}`);

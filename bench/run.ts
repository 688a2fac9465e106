/**
 * `npm run bench -- <name>`: runs one benchmark and prints its results (Markdown, ready for
 * docs/benchmarks.md). Benchmarks measure; they never assert.
 */
const BENCHMARKS: Record<string, () => Promise<unknown>> = {
  proxy: () => import("./proxy.js").then((m) => m.runProxyBenchmark()),
  batch: () => import("./batch.js").then((m) => m.runBatchBenchmark()),
  streams: () => import("./streams.js").then((m) => m.runStreamsBenchmark()),
  upload: () => import("./upload.js").then((m) => m.runUploadBenchmark()),
  stall: () => import("./stall.js").then((m) => m.runStallBenchmark()),
  "streams-burst": () => import("./streams-burst.js").then((m) => m.runStreamsBurstBenchmark()),
  filters: () => import("./filters.js").then((m) => m.runFiltersBenchmark()),
};

const name = process.argv[2];
const bench = name ? BENCHMARKS[name] : undefined;
if (!bench) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHMARKS).join("|")}>`);
  process.exit(2);
}
await bench();
process.exit(0);

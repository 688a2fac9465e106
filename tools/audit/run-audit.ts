import { spawnSync } from "node:child_process";
import { auditVerdict } from "./audit-policy.js";

/** `npm run audit`, run by .ci/run: the production dependencies' advisories, judged by audit-policy.ts. */
const run = spawnSync("npm", ["audit", "--omit=dev", "--json"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
let report: unknown;
try {
  report = JSON.parse(run.stdout);
} catch {
  report = undefined;
}
const verdict = auditVerdict(report);
if (verdict.unanswered)
  console.warn(`npm audit: NOT CHECKED — the registry did not answer the audit (${verdict.unanswered})`);
for (const line of verdict.noted) console.log(`npm audit: noted ${line}`);
for (const line of verdict.blocking) console.error(`npm audit: BLOCKING ${line}`);
if (!verdict.unanswered) console.log(`npm audit: ${verdict.blocking.length} blocking, ${verdict.noted.length} noted`);
process.exit(verdict.blocking.length > 0 ? 1 : 0);

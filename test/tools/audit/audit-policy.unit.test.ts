import * as assert from "uvu/assert";
import { auditVerdict } from "../../../tools/audit/audit-policy.js";
import { suite } from "../../support/suite.js";

// The policy CI applies to `npm audit --omit=dev --json` (tools/audit/), on hand-written reports
// in npm's format.
const test = suite("npm audit policy");

test("a high or critical advisory with a fix blocks; without a fix, or below high, it is noted", () => {
  const verdict = auditVerdict({
    auditReportVersion: 2,
    vulnerabilities: {
      "fixable-high": { name: "fixable-high", severity: "high", fixAvailable: true },
      "fixable-critical": {
        name: "fixable-critical",
        severity: "critical",
        fixAvailable: { name: "parent", version: "2.0.0", isSemVerMajor: true },
      },
      "stuck-critical": { name: "stuck-critical", severity: "critical", fixAvailable: false },
      "fixable-moderate": { name: "fixable-moderate", severity: "moderate", fixAvailable: true },
    },
  });
  assert.equal(verdict.blocking, ["fixable-high (high, fix available)", "fixable-critical (critical, fix available)"]);
  assert.equal(verdict.noted, ["stuck-critical (critical, no fix)", "fixable-moderate (moderate, fix available)"]);
  assert.is(verdict.unanswered, undefined);
});

test("a clean report blocks nothing", () => {
  assert.equal(auditVerdict({ auditReportVersion: 2, vulnerabilities: {} }), { blocking: [], noted: [] });
});

test("a registry that refuses the audit is reported as not checked, never as clean", () => {
  const verdict = auditVerdict({
    message: "405 Method Not Allowed - POST https://registry.example/-/npm/v1/security/advisories/bulk",
    statusCode: 405,
  });
  assert.equal(verdict.blocking, []);
  assert.match(verdict.unanswered ?? "", /405 Method Not Allowed/);
  assert.match(auditVerdict(undefined).unanswered ?? "", /no JSON report/);
});

test.run();

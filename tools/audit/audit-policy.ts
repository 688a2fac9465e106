/**
 * What CI does with `npm audit --omit=dev --json`: it fails on a high or critical advisory in a
 * production dependency that has a fix (`npm audit fix` or an upgrade can take it), and lists the
 * rest without failing, since an advisory without a fix can only be weighed, not acted on. When
 * the registry does not answer the audit at all (some mirrors refuse its endpoint), the check says
 * so loudly and does not fail: an unanswered audit is not a finding.
 */
export interface AuditVerdict {
  /** Advisories that fail the build: `name (severity)`. */
  blocking: string[];
  /** Advisories listed for a person to weigh. */
  noted: string[];
  /** Why nothing could be checked, when the registry did not answer. */
  unanswered?: string;
}

const BLOCKING = new Set(["high", "critical"]);

export function auditVerdict(report: unknown): AuditVerdict {
  if (!isRecord(report)) return { blocking: [], noted: [], unanswered: "npm audit printed no JSON report" };
  const vulnerabilities = report.vulnerabilities;
  if (!isRecord(vulnerabilities)) {
    const why = typeof report.message === "string" ? report.message : "the report has no vulnerabilities section";
    return { blocking: [], noted: [], unanswered: why };
  }
  const blocking: string[] = [];
  const noted: string[] = [];
  for (const [name, entry] of Object.entries(vulnerabilities)) {
    if (!isRecord(entry)) continue;
    const severity = typeof entry.severity === "string" ? entry.severity : "unknown";
    const fixable = entry.fixAvailable !== false && entry.fixAvailable !== undefined;
    const line = `${name} (${severity}${fixable ? ", fix available" : ", no fix"})`;
    (BLOCKING.has(severity) && fixable ? blocking : noted).push(line);
  }
  return { blocking, noted };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

import type { FindingSeverity, SecurityFinding } from './types';
import { isRecord } from './text';

const SEVERITIES: Record<string, FindingSeverity> = {
  critical: 'critical',
  high: 'high',
  moderate: 'medium',
  medium: 'medium',
  low: 'low',
  info: 'info',
};

/** Whether a JSON value is an `npm audit --json` report of npm 7 or later. */
export function isNpmAudit(value: unknown): value is Record<string, unknown> {
  return (
    isRecord(value) &&
    isRecord(value.vulnerabilities) &&
    (value.auditReportVersion === 2 || (isRecord(value.metadata) && isRecord(value.metadata.vulnerabilities)))
  );
}

/**
 * One finding per vulnerable package, as npm counts them in `metadata.vulnerabilities`:
 * titled by its advisories, or by the packages it is vulnerable through (`via` names) when
 * it only depends on a vulnerable package; the id is the worst advisory's. npm's `moderate`
 * is `medium`.
 */
export function npmAuditFindings(report: Record<string, unknown>): SecurityFinding[] {
  const findings: SecurityFinding[] = [];
  for (const [name, entry] of Object.entries(report.vulnerabilities as Record<string, unknown>)) {
    if (!isRecord(entry)) continue;
    const via = Array.isArray(entry.via) ? entry.via : [];
    // Worst first, so the id is that of the advisory that gives the package its severity.
    const advisories = via.filter(isRecord).sort((a, b) => rank(b.severity) - rank(a.severity));
    const through = via.filter((v): v is string => typeof v === 'string');
    const title = advisories.length
      ? [...new Set(advisories.map((a) => String(a.title ?? 'advisory')))].join('; ')
      : `depends on vulnerable ${through.join(', ') || 'packages'}`;
    findings.push({
      severity: SEVERITIES[String(entry.severity)] ?? 'info',
      title,
      id: advisories.map(advisoryId).find((id) => id !== undefined),
      package: String(entry.name ?? name),
    });
  }
  return findings;
}

const RANK: FindingSeverity[] = ['info', 'low', 'medium', 'high', 'critical'];

function rank(severity: unknown): number {
  return RANK.indexOf(SEVERITIES[String(severity)] ?? 'info');
}

/** The GHSA id from the advisory URL, else npm's numeric source id. */
function advisoryId(advisory: Record<string, unknown>): string | undefined {
  const ghsa = typeof advisory.url === 'string' ? /GHSA(?:-[a-z0-9]{4}){3}/i.exec(advisory.url) : null;
  if (ghsa) return ghsa[0];
  return advisory.source === undefined ? undefined : String(advisory.source);
}

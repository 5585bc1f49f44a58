import type { ParsedGateOutput } from './types';
import { isNpmAudit, npmAuditFindings } from './npmAudit';
import { isSarif, sarifFindings } from './sarif';
import { embeddedJson } from './text';

/** Findings from every `npm audit --json` report and SARIF log in the output. */
export function parseSecurity(output: string): ParsedGateOutput['security'] {
  let security: ParsedGateOutput['security'];
  for (const value of embeddedJson(output)) {
    const findings = isNpmAudit(value) ? npmAuditFindings(value) : isSarif(value) ? sarifFindings(value) : undefined;
    if (!findings) continue;
    security ??= { findings: [] };
    security.findings.push(...findings);
  }
  return security;
}

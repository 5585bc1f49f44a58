import type { DelegationRequest, DelegationResult, ToolEvidence } from './types';

/** Evidence lines shown; older ones are counted, not listed. */
export const ENVELOPE_EVIDENCE_LINES = 12;
/** The agent's response is cut beyond this, with a marker saying how much was cut. */
export const ENVELOPE_RESPONSE_CHARS = 4000;

/**
 * The verification envelope (DESIGN §4): what the orchestrator reads instead of a sub-agent's
 * free text. Layout, line by line:
 *
 * ```
 * [DELEGATION RESULT — DEVO]
 * Objective: …
 * Expected Outcome: …                       (when given)
 *
 * Status: PARTIAL
 * Evidence:                                 (when there is any)
 *   (N earlier tool calls not shown)        (when more than 12)
 *   - [OK] read_file: read src/auth/login.ts
 *   - [OK] git_push id=3f2a9c1: pushed HEAD to origin
 *   - [PENDING] open_pull_request: awaiting approval: …
 *   - [ERROR] run_command: npm test (exit code 1)
 *   - [MISSING] git_commit: no commit created
 *
 * Escalation: …                             (when escalated)
 *
 * Recommendations: …; …                     (scout, when any)
 *
 * Agent Response:
 * …
 * ```
 */
export function buildEnvelope(request: DelegationRequest, result: DelegationResult, maxResponseChars = ENVELOPE_RESPONSE_CHARS): string {
  const lines: string[] = [`[DELEGATION RESULT — ${request.target.toUpperCase()}]`, `Objective: ${request.objective}`];
  if (request.expectedOutcome) lines.push(`Expected Outcome: ${request.expectedOutcome}`);
  lines.push('');
  lines.push(`Status: ${result.status.toUpperCase()}`);

  const missing = result.missingEvidence ?? [];
  if (result.toolEvidence.length > 0 || missing.length > 0) {
    lines.push('Evidence:');
    const hidden = result.toolEvidence.length - ENVELOPE_EVIDENCE_LINES;
    if (hidden > 0) lines.push(`  (${hidden} earlier tool call${hidden === 1 ? '' : 's'} not shown)`);
    for (const evidence of result.toolEvidence.slice(-ENVELOPE_EVIDENCE_LINES)) lines.push(evidenceLine(evidence));
    for (const m of missing) lines.push(`  - [MISSING] ${m.tool}: ${m.summary}`);
  }
  if (result.escalation) lines.push('', `Escalation: ${result.escalation}`);
  const recommendations = result.findings?.recommendations ?? [];
  if (recommendations.length > 0) lines.push('', `Recommendations: ${recommendations.join('; ')}`);
  lines.push('', 'Agent Response:', truncateWithMarker(result.summary.trim() || '(no answer)', maxResponseChars));
  return lines.join('\n');
}

export function evidenceLine(evidence: ToolEvidence): string {
  const tag = evidence.success ? 'OK' : evidence.pendingApproval ? 'PENDING' : 'ERROR';
  const id = evidence.externalId ? ` id=${evidence.externalId}` : '';
  return `  - [${tag}] ${evidence.tool}${id}: ${evidence.summary}`;
}

/** Cuts `text` to `max` characters, never silently: the marker says how much is gone. */
export function truncateWithMarker(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… [truncated: ${text.length - max} more characters]`;
}

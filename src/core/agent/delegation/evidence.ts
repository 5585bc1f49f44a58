import type { ToolCall } from '../../llm/types';
import type { ToolResult } from '../tools/types';
import type { MissingEvidence, ToolEvidence } from './types';

/** Evidence of one tool execution, straight from its result. */
export function evidenceOf(call: Pick<ToolCall, 'name'>, outcome: ToolResult): ToolEvidence {
  const evidence: ToolEvidence = { tool: call.name, success: outcome.ok, summary: outcome.summary };
  if (outcome.pendingApproval) evidence.pendingApproval = true;
  if (outcome.externalId) evidence.externalId = outcome.externalId;
  if (outcome.nextStep) evidence.nextStep = outcome.nextStep;
  return evidence;
}

/** What a missing tool means, in the words the orchestrator reads. */
const MISSING_SUMMARY: Record<string, string> = {
  git_commit: 'no commit created',
  run_command: 'no command succeeded',
  write_file: 'no file written',
  edit_file: 'no file edited',
  read_file: 'no file read',
  git_push: 'nothing pushed',
  open_pull_request: 'no pull request opened',
  open_issue: 'no issue opened',
  notify: 'no notification sent',
};

/** Each expected tool without a successful call, in the order the delegation named them. */
export function missingEvidence(evidence: readonly ToolEvidence[], expected: readonly string[] | undefined): MissingEvidence[] {
  const succeeded = new Set(evidence.filter((e) => e.success).map((e) => e.tool));
  const missing: MissingEvidence[] = [];
  for (const tool of new Set(expected ?? [])) {
    if (succeeded.has(tool)) continue;
    const tried = evidence.some((e) => e.tool === tool);
    missing.push({ tool, summary: MISSING_SUMMARY[tool] ?? (tried ? `no successful ${tool} call` : `${tool} was never called`) });
  }
  return missing;
}

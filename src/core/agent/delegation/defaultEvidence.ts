import type { AgentName, DelegationRequest, MissingEvidence, ToolEvidence } from './types';

const EDIT_TOOLS = new Set(['write_file', 'edit_file']);
const LOOK_TOOLS = new Set(['read_file', 'list_files', 'search']);
const ACTION_TOOLS = new Set(['git_push', 'open_pull_request', 'open_issue', 'notify']);

/** "do not commit", "don't commit", "without committing", "no commit": the delegation opts out. */
const NO_COMMIT = /\b(?:do\s+not|don['’]t|never|without|no)\s+(?:\w+\s+)?commit/i;

/**
 * What each sub-agent must show without the orchestrator asking, so a result never reads
 * SUCCESS on the agent's word alone:
 * - devo, once it changed a file: a command run after its last edit (the change was exercised)
 *   and a commit after it (its profile asks it to commit; a delegation can say not to);
 * - scout: something read, listed or searched (its findings rest on the workspace);
 * - caio: one of its actions attempted (done, or pending a human's approval).
 * A rule only applies when the profile has the tool it names.
 */
export function defaultMissingEvidence(
  agent: AgentName,
  tools: readonly string[],
  request: DelegationRequest,
  evidence: readonly ToolEvidence[],
): MissingEvidence[] {
  const has = (tool: string) => tools.includes(tool);
  const missing: MissingEvidence[] = [];
  if (agent === 'devo') {
    const lastEdit = lastIndex(evidence, (e) => e.success && EDIT_TOOLS.has(e.tool));
    if (lastEdit < 0) return [];
    const after = evidence.slice(lastEdit + 1);
    if (has('run_command') && !after.some((e) => e.tool === 'run_command')) {
      missing.push({ tool: 'run_command', summary: 'no command run after the last edit: the change was never exercised' });
    }
    const optedOut = [request.objective, request.expectedOutcome ?? '', ...(request.constraints ?? [])].some((text) =>
      NO_COMMIT.test(text),
    );
    if (has('git_commit') && !optedOut && !after.some((e) => e.tool === 'git_commit' && e.success)) {
      missing.push({ tool: 'git_commit', summary: 'no commit created' });
    }
  }
  if (agent === 'scout' && [...LOOK_TOOLS].some(has) && !evidence.some((e) => e.success && LOOK_TOOLS.has(e.tool))) {
    missing.push({ tool: 'read_file', summary: 'nothing read, listed or searched: the findings rest on no file' });
  }
  if (
    agent === 'caio' &&
    [...ACTION_TOOLS].some(has) &&
    !evidence.some((e) => ACTION_TOOLS.has(e.tool) && (e.success || e.pendingApproval))
  ) {
    missing.push({ tool: 'action', summary: 'no push, pull request, issue or notification was attempted' });
  }
  return missing;
}

/** The explicit list first; a default line only for a tool the explicit list does not already name. */
export function mergeMissing(explicit: readonly MissingEvidence[], defaults: readonly MissingEvidence[]): MissingEvidence[] {
  const named = new Set(explicit.map((m) => m.tool));
  return [...explicit, ...defaults.filter((m) => !named.has(m.tool))];
}

function lastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i])) return i;
  return -1;
}

import type { DelegationResult } from './agent/delegation/types';
import type { EventOf, RalphEvent, RalphEventType } from './events';
import { faultLabel } from './llm/faults';
import { formatSignal } from './signals/types';
import { describeLine } from './spend/receiptFormat';
import type { Task } from './tasks/schema';

/** What the loop does about each kind of model fault, as said in a terminal. */
const FAULT_ACTIONS: Record<EventOf<'model.fault'>['action'], string> = {
  halt: 'the task halts',
  'compact-retry': 'compacting the conversation and retrying once',
  feedback: 'told to the agent',
  error: 'the iteration ends with the error',
};

/** The warnings of llm.fallback switches and returns (the `model.fallback` event itself prints nothing). */
const FALLBACK_WARNINGS = new Set(['model-switch', 'model-return', 'model-probe-failed']);

/** A parallel task's agent slot moving, as said in a terminal. */
const SLOT_LINES: Record<EventOf<'agent.slot'>['state'], string> = {
  gates: '⇣ its gates run: its agent slot goes to the next task meanwhile',
  waiting: '… sent back by its gates: waits for a free agent slot (before any new task)',
  model: '⇡ has an agent slot again',
};

/** Events whose line names its task already. */
const NAMES_ITS_TASK = new Set(['task.started', 'task.finished', 'merge']);

/**
 * One human-readable line per event worth showing in a terminal; undefined to skip. With
 * `taskPrefix` (several agents at once) each line of a task starts with `[<taskId>]`, so the
 * interleaved lines of parallel agents stay readable.
 */
export function formatEvent(event: RalphEvent, options: { taskPrefix?: boolean } = {}): string | undefined {
  const line = formatLine(event);
  const taskId = 'taskId' in event ? event.taskId : undefined;
  if (!line || !options.taskPrefix || !taskId || NAMES_ITS_TASK.has(event.type)) return line;
  return `[${taskId}] ${line.trimStart()}`;
}

/**
 * One line per event type, or undefined for the events with no line of their own in a terminal
 * (too fine-grained, or said by the lines around them). A typed table: a new event is a compile
 * error here until the terminal decides on it.
 */
const LINES: { [K in RalphEventType]: ((event: EventOf<K>) => string) | undefined } = {
  'run.started': (event) => `▶ run ${event.runId} in ${event.workspace}`,
  'task.started': (event) =>
    `● ${event.taskId} ${event.title} — ${event.resumed ? 'resuming at' : 'starting'} iteration ${event.iteration}/${event.maxIterations}`,
  'iteration.started': (event) => `  ↻ iteration ${event.iteration}/${event.maxIterations} (${event.model})`,
  'agent.session': (event) => `    ⌁ ${event.agent} session ${event.sessionId}${event.model ? ` (${event.model})` : ''}`,
  'tool.call': (event) => `    ${agentTag(event.agent)}→ ${event.tool} ${shorten(event.args, 100)}`,
  'tool.result': (event) => `    ${agentTag(event.agent)}${event.ok ? '✓' : '✗'} ${event.tool}: ${event.summary}`,
  'delegation.started': (event) => `    ⇢ delegate to ${event.target} (${event.model}): ${shorten(event.objective, 100)}`,
  'delegation.result': (event) =>
    `    ⇠ ${event.target}: ${event.status.toUpperCase()} — ${evidenceCounts(event.result)}${event.result.escalation ? ` — escalated: ${shorten(event.result.escalation, 100)}` : ''} (${seconds(event.durationMs)}, ${event.usage.totalTokens} tokens)`,
  compaction: (event) =>
    `    ⇊ compacted the ${event.scope === 'orchestrator' ? 'orchestrator' : `${event.scope} sub-agent`}'s context: ${event.tokensBefore} → ${event.tokensAfter} tokens (original request pinned)`,
  signal: (event) => `    ⚑ ${formatSignal(event.signal)}`,
  'git.commit': (event) =>
    `    ⎇ ${event.sha.slice(0, 8)} ${event.message} (${event.files.length} file${event.files.length === 1 ? '' : 's'})`,
  'iteration.finished': (event) =>
    `  ■ iteration ${event.iteration}: ${event.outcome}${event.signal ? ` [${event.signal}]` : ''}${event.error ? ` — ${event.error}` : ''} (${seconds(event.durationMs)}, ${event.usage.totalTokens} tokens)`,
  'model.retry': (event) =>
    `    … model call failed (${event.fault === 'rate_limit' ? 'rate limited: ' : ''}${event.reason}); retry ${event.attempt}/${event.maxRetries} in ${seconds(event.delayMs)}`,
  'model.fault': (event) =>
    `    ${agentTag(event.agent)}⚡ ${faultLabel(event.fault)} (${event.model}) — ${FAULT_ACTIONS[event.action]}: ${shorten(event.message, 300)}`,
  'wind-down': (event) =>
    `    ⏏ wind-down (${event.reason}): ${event.wrote.length > 0 ? `wrote ${event.wrote.join(', ')}` : `no notes written${event.error ? ` — ${event.error}` : ''}`}`,
  'task.finished': (event) =>
    `● ${event.taskId} ${event.status.toUpperCase()} after ${event.iterations} iteration${event.iterations === 1 ? '' : 's'}: ${event.reason}${event.receipt ? `\n  $ ${describeLine(event.receipt.total)}` : ''}`,
  'gate.started': (event) => `  ◇ gate ${event.gate}: ${event.command}`,
  'gate.finished': (event) =>
    [
      `  ${event.passed ? '◆' : '✗'} gate ${event.gate}${event.required ? '' : ' (optional)'}: ${event.passed ? 'passed' : 'FAILED'} — ${event.summary}`,
      ...(event.integrity?.violations ?? []).map((v) => `    ⚠ weakened: ${v}`),
      ...(event.integrity?.allowed ?? []).map((v) => `    ⓘ allowed gate change: ${v}`),
    ].join('\n'),
  'integrity.baseline': (event) =>
    `  ⛉ gate baseline: ${event.gates.map((g) => `${g.gate}${g.tests ? ` (${g.tests.total - g.tests.skipped} tests run)` : ''}`).join(', ') || 'no required gates'}`,
  'report.written': (event) => `  ▤ report ${event.file}`,
  escalation: (event) => `  ⇧ escalated ${event.from} → ${event.to}: ${event.reason}`,
  'council.started': (event) => `  ⚖ bug council convened (${event.models.join(', ')}): ${event.reason}`,
  'council.finished': (event) => `  ⚖ council plan: ${event.plan.split('\n')[0].slice(0, 160)}`,
  'run.paused': () => '⏸ paused (the current step finished; resume to go on)',
  'run.resumed': () => '▶ resumed',
  // a model.fallback event comes with this warning: one line for both
  warning: (event) => `${FALLBACK_WARNINGS.has(event.code) ? '⇄' : '⚠'} ${event.message}`,
  error: (event) => `✗ ${event.message}`,
  'run.finished': (event) => `■ run finished: ${event.reason}`,
  'plan.started': (event) => `▶ planning ${event.document}${event.section ? ` (section "${event.section}")` : ''} with ${event.model}`,
  'plan.finished': (event) => `■ plan ${event.outcome}: ${event.reason}`,
  'agent.slot': (event) => `  ${SLOT_LINES[event.state]}`,
  merge: (event) =>
    `⇶ ${event.taskId} merge ${event.state}${event.provisional ? ' (checked ahead of its own gates)' : ''}${event.detail ? `: ${shorten(event.detail, 200)}` : ''}`,
  // no line of their own in a terminal: too fine-grained, or said by the lines around them
  'task.status': undefined,
  'model.delta': undefined,
  'model.response': undefined,
  'model.fallback': undefined,
  checkpoint: undefined,
  proof: undefined,
  budget: undefined,
  'warning.answered': undefined,
  worktree: undefined,
};

function formatLine(event: RalphEvent): string | undefined {
  const line = LINES[event.type] as ((event: RalphEvent) => string) | undefined;
  return line?.(event);
}

export function formatTaskTable(tasks: readonly Task[]): string {
  if (tasks.length === 0) return 'No tasks. Add one with: ralph task add <title> --prompt <text> --promise <text>';
  const rows = tasks.map((t) => [
    t.id,
    t.status,
    `${t.iterations}${t.maxIterations ? `/${t.maxIterations}` : ''}`,
    String(t.priority),
    t.title,
  ]);
  const header = ['ID', 'STATUS', 'ITER', 'PRIO', 'TITLE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

function agentTag(agent: string | undefined): string {
  return agent ? `[${agent}] ` : '';
}

/** `2 OK, 1 ERROR, 1 MISSING`, or `no tool calls`. */
function evidenceCounts(result: DelegationResult): string {
  const count = (tag: string, n: number) => (n > 0 ? [`${n} ${tag}`] : []);
  const evidence = result.toolEvidence;
  const parts = [
    ...count('OK', evidence.filter((e) => e.success).length),
    ...count('ERROR', evidence.filter((e) => !e.success && !e.pendingApproval).length),
    ...count('PENDING', evidence.filter((e) => e.pendingApproval).length),
    ...count('MISSING', result.missingEvidence?.length ?? 0),
  ];
  return parts.length > 0 ? parts.join(', ') : 'no tool calls';
}

function shorten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

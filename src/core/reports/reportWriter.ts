import { renderReceipt } from './receiptReport';
import type { RalphConfig } from '../config/schema';
import type { GateReport } from '../gates/types';
import type { CompletionDecision } from '../loop/completionPolicy';
import type { Checkpoint, IterationRecord } from '../loop/checkpoint';
import { estimateCostUsd, formatUsd } from '../llm/pricing';
import type { RalphPaths } from '../paths';
import type { Task, TaskStatus } from '../tasks/schema';
import { writeFileAtomic } from '../util/atomicWrite';
import { boundText, STORED_FILES_MAX, summarizedFiles } from '../util/bounded';
import { duration, fence, list, table } from './markdown';

/** What a sub-agent did in an iteration, as the iteration report lists it. */
export interface AgentRun {
  agent: string;
  model: string;
  status: string;
  detail: string;
}

export interface IterationReportInput {
  task: Task;
  record: IterationRecord;
  maxIterations: number;
  gates: GateReport | undefined;
  decision: CompletionDecision | undefined;
  agents: AgentRun[];
  modelChanges: string[];
  /** The bug council's plan, when it met after this iteration. */
  councilPlan?: string;
}

export interface FinalReportInput {
  task: Task;
  status: TaskStatus;
  reason: string;
  maxIterations: number;
  checkpoint: Checkpoint;
  files: { added: string[]; modified: string[]; deleted: string[] };
  escalations: string[];
}

/** Writes `.ralph/reports/<taskId>/iteration-<n>.md` and `final.md`. */
export class ReportWriter {
  constructor(
    private readonly paths: RalphPaths,
    private readonly config: RalphConfig,
  ) {}

  iterationFile(taskId: string, iteration: number): string {
    return `${this.paths.reportsDir(taskId)}/iteration-${iteration}.md`;
  }

  finalFile(taskId: string): string {
    return `${this.paths.reportsDir(taskId)}/final.md`;
  }

  async writeIteration(input: IterationReportInput): Promise<string> {
    const file = this.iterationFile(input.task.id, input.record.iteration);
    await writeFileAtomic(file, renderIteration(input));
    return file;
  }

  async writeFinal(input: FinalReportInput): Promise<string> {
    const file = this.finalFile(input.task.id);
    await writeFileAtomic(file, renderFinal(input, this.config));
    return file;
  }
}

export function decisionLabel(record: IterationRecord): 'COMPLETE' | 'ITERATE' | 'HALT' {
  if (record.outcome === 'complete') return 'COMPLETE';
  if (record.outcome === 'continue' || record.outcome === 'error') return record.decision?.startsWith('critical') ? 'HALT' : 'ITERATE';
  return 'HALT';
}

export function renderIteration(input: IterationReportInput): string {
  const { task, record } = input;
  const out: string[] = [];
  out.push(`# Iteration ${record.iteration}/${input.maxIterations} — ${task.id}: ${task.title}`);
  out.push(
    list([
      `Started: ${record.startedAt}`,
      `Duration: ${duration(record.durationMs)}`,
      `Model: ${record.model}`,
      `Signal: ${record.signal ?? '(no signal)'}`,
      `Commit: ${record.commit ? `${record.commit.slice(0, 8)} (${plural(record.filesChangedTotal ?? record.filesChanged.length, 'file')})` : 'none'}`,
      `Tokens: ${record.usage.promptTokens} in, ${record.usage.completionTokens} out`,
    ]),
  );
  out.push('## Agents executed');
  out.push(table(['Agent', 'Model', 'Status', 'Detail'], [['orchestrator', record.model, record.outcome, record.error ?? (record.summary ? firstLine(record.summary) : '')], ...input.agents.map((a) => [a.agent, a.model, a.status, a.detail])]));
  out.push('## Quality gates');
  const gates = input.gates;
  if (!gates || gates.outcomes.length === 0) {
    out.push(record.signal?.startsWith('BLOCKED') || record.signal?.startsWith('NEEDS_HELP') ? '_not run: the agent stopped the task_' : '_no gates configured_');
  } else {
    out.push(table(['Gate', 'Kind', 'Required', 'Result', 'Details'], gates.outcomes.map((o) => [o.name, o.kind, o.required ? 'yes' : 'no', o.passed ? '✓ pass' : '✗ FAIL', o.summary])));
    const failing = gates.outcomes.flatMap((o) => (o.parsed.tests?.failures ?? []).map((f) => `\`${f.name}\`${f.message ? ` — ${firstLine(f.message)}` : ''}`));
    if (failing.length) out.push(`### Failing tests\n${list(failing)}`);
    const findings = gates.outcomes.flatMap((o) => o.parsed.security?.findings ?? []);
    out.push(`### Security findings\n${list(findings.map((f) => `**${f.severity}** ${f.title}${f.package ? ` (${f.package})` : ''}${f.id ? ` ${f.id}` : ''}`))}`);
    const weakened = gates.outcomes.flatMap((o) => (o.integrity?.violations ?? []).map((v) => `**${o.name}**: ${v}`));
    const allowed = gates.outcomes.flatMap((o) => (o.integrity?.allowed ?? []).map((v) => `**${o.name}**: ${v}`));
    if (weakened.length) out.push(`### Gates weakened against the task's base\n${list(weakened)}`);
    if (allowed.length) out.push(`### Gate changes the task was allowed to make\n${list(allowed)}`);
    const coverage = gates.outcomes.filter((o) => o.kind === 'coverage');
    if (coverage.length) out.push(`### Coverage\n${list(coverage.map((o) => `${o.name}: ${o.summary}`))}`);
    const tails = gates.outcomes.filter((o) => !o.passed && o.outputTail);
    for (const o of tails) out.push(`### Output of ${o.name} (last lines)\n${fence(o.outputTail ?? '')}${o.logPath ? `\nFull log: \`${o.logPath}\`` : ''}`);
  }
  out.push(`## Model changes\n${list(input.modelChanges)}`);
  if (input.councilPlan) out.push(`## Bug council\n${input.councilPlan}`);
  const label = decisionLabel(record);
  out.push(`## Decision: ${label}\n${record.decision ?? record.error ?? record.outcome}`);
  if (record.tampering.length) out.push(`## Tampering (restored)\n${list(record.tampering)}`);
  if (record.feedback.length) out.push(`### Fed back to the next iteration\n${list(record.feedback)}`);
  return `${out.join('\n\n')}\n`;
}

export function renderFinal(input: FinalReportInput, config: RalphConfig): string {
  const { task, checkpoint: cp } = input;
  const out: string[] = [];
  out.push(`# Final report — ${task.id}: ${task.title}`);
  out.push(
    list([
      `Status: **${input.status.toUpperCase()}** — ${boundText(input.reason)}`,
      `Iterations: ${cp.iteration}/${input.maxIterations}`,
      `Active time: ${duration(cp.elapsedMs)}`,
      `Commits: ${cp.commits}${cp.baseCommit ? ` (since ${cp.baseCommit.slice(0, 8)})` : ''}`,
    ]),
  );
  out.push(`## Task\n**Prompt**\n\n${fence(task.prompt)}\n\n**Promise**\n\n${fence(task.promise)}`);
  const last = [...cp.history].reverse().find((r) => r.gates.length > 0);
  out.push('## Quality summary');
  out.push(last ? `Gates of iteration ${last.iteration}:\n\n${table(['Gate', 'Required', 'Result', 'Details'], last.gates.map((g) => [g.name, g.required ? 'yes' : 'no', g.passed ? '✓ pass' : '✗ FAIL', g.summary]))}` : '_no gates ran_');
  out.push(...gateChanges(cp));
  // the receipt supersedes the plain usage table (it prices cached input and shows the provider's figure)
  if (cp.receipt) out.push(renderReceipt(cp.receipt));
  else {
    out.push('## Model usage');
    const rows = Object.entries(cp.modelUsage).map(([model, u]) => [model, String(u.calls), String(u.promptTokens), String(u.completionTokens), costCell(estimateCostUsd(model, u, config.llm.prices, config.llm.provider), config.llm.provider)]);
    const totalCost = Object.entries(cp.modelUsage).reduce<number | undefined>((sum, [model, u]) => {
      const cost = estimateCostUsd(model, u, config.llm.prices, config.llm.provider);
      return cost === undefined ? sum : (sum ?? 0) + cost;
    }, undefined);
    rows.push(['**total**', String(Object.values(cp.modelUsage).reduce((n, u) => n + u.calls, 0)), String(cp.usage.promptTokens), String(cp.usage.completionTokens), costCell(totalCost, config.llm.provider)]);
    out.push(table(['Model', 'Calls', 'Prompt tokens', 'Completion tokens', 'Est. cost'], rows));
  }
  out.push(`## Escalation history\n${list(input.escalations)}`);
  // model faults (quota, auth, outage… told apart in the message) and cut-short iterations, as recorded
  const faults = cp.history.filter((r) => r.error).map((r) => `iteration ${r.iteration} (${r.model}): ${r.error}`);
  const fallbackModels = new Set(config.llm.fallback.map((f) => f.model).filter((m) => !config.llm.models.includes(m)));
  const servedByFallback = Object.entries(cp.modelUsage)
    .filter(([model]) => fallbackModels.has(model))
    .map(([model, u]) => `\`${model}\` (llm.fallback) served ${u.calls} call${u.calls === 1 ? '' : 's'} while the primary was failing`);
  if (faults.length || servedByFallback.length) out.push(`## Errors and model faults\n${list([...servedByFallback, ...faults])}`);
  const tampered = cp.history.flatMap((r) => r.tampering.map((t) => `iteration ${r.iteration}: ${t}`));
  if (tampered.length) out.push(`## Tampering (restored)\nThe agent's commands or the gates changed control files; each was put back.\n\n${list(tampered)}`);
  const product = (files: string[]) => files.filter((f) => !f.startsWith('.ralph/'));
  out.push(`## Files\n**Created**\n${fileList(product(input.files.added))}\n\n**Modified**\n${fileList(product(input.files.modified))}\n\n**Deleted**\n${fileList(product(input.files.deleted))}`);
  out.push('## Iterations');
  out.push(
    table(
      ['#', 'Started', 'Duration', 'Model', 'Signal', 'Gates', 'Outcome'],
      cp.history.map((r) => [String(r.iteration), r.startedAt.slice(11, 19), duration(r.durationMs), r.model, r.signal ?? '(no signal)', r.gates.length ? `${r.gates.filter((g) => g.passed).length}/${r.gates.length} pass` : '—', r.outcome]),
    ),
  );
  if (cp.history.length > 0 && cp.history[0].iteration > 1) out.push(`_Earlier iterations are in the iteration reports and run logs._`);
  return `${out.join('\n\n')}\n`;
}

/**
 * What the task changed in its gates, from the last gate run: allowed changes (what the gates
 * check now differs from the base) and weakenings still in place when the task ended.
 */
function gateChanges(cp: Checkpoint): string[] {
  const last = [...cp.history].reverse().find((r) => r.gates.length > 0);
  if (!cp.integrity) return [];
  const allowed = (last?.gates ?? []).flatMap((g) => (g.integrity?.allowed ?? []).map((v) => `**${g.name}**: ${v}`));
  const weakened = (last?.gates ?? []).flatMap((g) => (g.integrity?.violations ?? []).map((v) => `**${g.name}**: ${v}`));
  const out = ['## Gate integrity', `Judged against the base taken ${cp.integrity.takenAt} (${cp.integrity.gates.map((g) => `${g.gate}${g.tests ? `: ${g.tests.total - g.tests.skipped} tests run` : ''}`).join(', ') || 'no required gates'}).`];
  if (allowed.length) out.push(`**Gate changes the task was allowed to make**\n\n${list(allowed)}`);
  if (weakened.length) out.push(`**Gates weakened when the task ended**\n\n${list(weakened)}`);
  if (!allowed.length && !weakened.length) out.push('_The gates check what they checked at the base._');
  return [out.join('\n\n')];
}

/** A bounded list of file names: past 200, the rest is one line with their count. */
function fileList(files: readonly string[]): string {
  return list(summarizedFiles(files).map((f, i) => (i < STORED_FILES_MAX ? `\`${f}\`` : f)));
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0].slice(0, 160);
}

/** A cost cell: the editor's models are paid by the editor's plan, so an unpriced one reads "included", not $0. */
function costCell(cost: number | undefined, provider: RalphConfig['llm']['provider']): string {
  return cost === undefined && provider === 'vscode' ? 'included (editor plan)' : formatUsd(cost);
}

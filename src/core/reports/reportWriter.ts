import type { RalphConfig } from '../config/schema';
import type { GateReport } from '../gates/types';
import type { CompletionDecision } from './decision';
import type { IterationRecord } from '../record/checkpoint';
import type { RalphPaths } from '../paths';
import type { Task } from '../tasks/schema';
import { writeFileAtomic } from '../util/atomicWrite';
import { type DecisionLabel, iterationLabel } from './decision';
import { type FinalReportInput, renderFinal } from './finalReport';
import { duration, fence, list, table } from './markdown';
import { proofSection } from './proofSection';

export type { FinalReportInput };

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
  /** What happened after the iteration, when the loop knows better than the iteration itself (a timeout, a halt). */
  label?: DecisionLabel;
  /** Why the task ended after this iteration, with `label`. */
  ended?: string;
  maxIterations: number;
  gates: GateReport | undefined;
  decision: CompletionDecision | undefined;
  agents: AgentRun[];
  modelChanges: string[];
  /** The bug council's plan, when it met after this iteration. */
  councilPlan?: string;
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

export function renderIteration(input: IterationReportInput): string {
  const { task, record } = input;
  const out: string[] = [];
  out.push(`# Iteration ${record.iteration}/${input.maxIterations} — ${task.id}: ${task.title}`);
  out.push(
    list([
      `Started: ${record.startedAt}`,
      `Duration: ${duration(record.durationMs)}`,
      `Model: ${record.model}`,
      ...(record.agentSession
        ? [
            `Agent CLI session: ${record.agentSession.agent} ${record.agentSession.id}${record.agentSession.model ? ` (${record.agentSession.model})` : ''}`,
          ]
        : []),
      `Signal: ${record.signal ?? '(no signal)'}`,
      `Commit: ${record.commit ? `${record.commit.slice(0, 8)} (${plural(record.filesChangedTotal ?? record.filesChanged.length, 'file')})` : 'none'}`,
      `Tokens: ${record.usage.promptTokens} in, ${record.usage.completionTokens} out`,
    ]),
  );
  out.push('## Agents executed');
  out.push(
    table(
      ['Agent', 'Model', 'Status', 'Detail'],
      [
        ['orchestrator', record.model, record.outcome, record.error ?? (record.summary ? firstLine(record.summary) : '')],
        ...input.agents.map((a) => [a.agent, a.model, a.status, a.detail]),
      ],
    ),
  );
  out.push('## Quality gates');
  const gates = input.gates;
  if (!gates || gates.outcomes.length === 0) {
    out.push(
      record.signal?.startsWith('BLOCKED') || record.signal?.startsWith('NEEDS_HELP')
        ? '_not run: the agent stopped the task_'
        : '_no gates configured_',
    );
  } else {
    out.push(
      table(
        ['Gate', 'Kind', 'Required', 'Result', 'Details'],
        gates.outcomes.map((o) => [o.name, o.kind, o.required ? 'yes' : 'no', o.passed ? '✓ pass' : '✗ FAIL', o.summary]),
      ),
    );
    out.push(...gateSections(gates));
  }
  if (record.proof) out.push(proofSection(record.proof));
  out.push(`## Model changes\n${list(input.modelChanges)}`);
  if (input.councilPlan) out.push(`## Bug council\n${input.councilPlan}`);
  const label = input.label ?? iterationLabel(record, input.decision?.kind === 'finish' ? input.decision.status : undefined);
  const after = input.ended
    ? `${input.ended}${record.decision && record.decision !== input.ended ? ` (the iteration's own verdict: ${record.decision})` : ''}`
    : (record.decision ?? record.error ?? record.outcome);
  out.push(`## Decision: ${label}\n${after}`);
  if (record.tampering.length) out.push(`## Tampering (restored)\n${list(record.tampering)}`);
  if (record.feedback.length) out.push(`### Fed back to the next iteration\n${list(record.feedback)}`);
  return `${out.join('\n\n')}\n`;
}

/** How a failing test stands against the base, for the report: pre-existing (forgiven) or held, with the evidence. */
function baseMark(o: GateReport['outcomes'][number], name: string): string {
  const verdict = o.baseFailures?.find((b) => b.name === name);
  if (o.preExisting?.includes(name))
    return ` — **pre-existing** (already failing at the task's base; not held against the task${verdict ? `: ${verdict.why}` : ''})`;
  return verdict?.held ? ` — **failing at the base too, held against the task** (${verdict.why})` : '';
}

/** Failing tests (pre-existing ones marked), flaky tests, findings, integrity, coverage and output tails of one gate run. */
function gateSections(gates: GateReport): string[] {
  const out: string[] = [];
  const failing = gates.outcomes.flatMap((o) =>
    (o.parsed.tests?.failures ?? []).map((f) => `\`${f.name}\`${baseMark(o, f.name)}${f.message ? ` — ${firstLine(f.message)}` : ''}`),
  );
  if (failing.length) out.push(`### Failing tests\n${list(failing)}`);
  const flaky = gates.outcomes.flatMap((o) =>
    (o.flaky ?? []).map(
      (n) => `**${o.name}**: \`${n}\` failed, then passed on a re-run (${o.reruns ?? 0} re-run${o.reruns === 1 ? '' : 's'})`,
    ),
  );
  if (flaky.length) out.push(`### Flaky tests\n${list(flaky)}`);
  const notes = gates.outcomes.flatMap((o) => (o.baselineNote ? [o.baselineNote] : []));
  if (notes.length) out.push(`### Not compared with the base\n${list(notes)}`);
  const findings = gates.outcomes.flatMap((o) => o.parsed.security?.findings ?? []);
  out.push(
    `### Security findings\n${list(findings.map((f) => `**${f.severity}** ${f.title}${f.package ? ` (${f.package})` : ''}${f.id ? ` ${f.id}` : ''}${SEVERITY_ACTION[f.severity] ? ` — ${SEVERITY_ACTION[f.severity]}` : ''}`))}`,
  );
  const weakened = gates.outcomes.flatMap((o) => (o.integrity?.violations ?? []).map((v) => `**${o.name}**: ${v}`));
  const allowed = gates.outcomes.flatMap((o) => (o.integrity?.allowed ?? []).map((v) => `**${o.name}**: ${v}`));
  if (weakened.length) out.push(`### Gates weakened against the task's base\n${list(weakened)}`);
  if (allowed.length) out.push(`### Gate changes the task was allowed to make\n${list(allowed)}`);
  const coverage = gates.outcomes.filter((o) => o.kind === 'coverage');
  if (coverage.length) out.push(`### Coverage\n${list(coverage.map((o) => `${o.name}: ${o.summary}`))}`);
  for (const o of gates.outcomes.filter((g) => !g.passed && g.outputTail))
    out.push(`### Output of ${o.name} (last lines)\n${fence(o.outputTail ?? '')}${o.logPath ? `\nFull log: \`${o.logPath}\`` : ''}`);
  return out;
}

/** What each security severity leads to (seed 003). */
const SEVERITY_ACTION: Partial<Record<string, string>> = {
  critical: 'halts the task; a person decides before the next task',
  high: 'fixed first; the model escalates at once',
  medium: 'a linked fix task',
  low: 'logged in .ralph/observations.md',
};

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0].slice(0, 160);
}

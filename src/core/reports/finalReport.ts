import type { RalphConfig } from '../config/schema';
import { boundText, STORED_FILES_MAX, summarizedFiles } from '../util/bounded';
import { estimateCostUsd, formatUsd } from '../llm/pricing';
import type { Checkpoint, IterationRecord } from '../record/checkpoint';
import type { Task, TaskStatus } from '../tasks/schema';
import { finalStatusLabel } from './decision';
import { duration, fence, list, table } from './markdown';
import { renderReceipt } from './receiptReport';
import { proofSection } from './proofSection';

export interface FinalReportInput {
  task: Task;
  status: TaskStatus;
  reason: string;
  maxIterations: number;
  checkpoint: Checkpoint;
  files: { added: string[]; modified: string[]; deleted: string[] };
  escalations: string[];
  /** The agent's COMPLETE was accepted in a worktree: the merge queue has not decided yet. */
  queued?: boolean;
  /** What the merge queue decided (the report is written again then). */
  merge?: { outcome: string; gates?: { name: string; passed: boolean; summary: string }[] };
  /** Low-severity findings the task logged to `.ralph/observations.md`. */
  observations?: string[];
}

/**
 * `final.md`, in seed 003's order: task, status (COMPLETE / INCOMPLETE / HALTED), iterations,
 * the quality summary as a yes/no line per gate with its counts, model usage (the cost receipt),
 * escalation history, files changed as counts — then what Ralph adds: the proof, pre-existing
 * and flaky tests, gate integrity, errors, tampering, observations and the iterations.
 */
export function renderFinal(input: FinalReportInput, config: RalphConfig): string {
  const { task, checkpoint: cp } = input;
  const out: string[] = [];
  const label = finalStatusLabel(input.status, input.queued === true);
  const status = input.queued ? 'queued for merge' : input.status.replace('_', ' ');
  out.push(`# Final report — ${task.id}: ${task.title}`);
  out.push(
    list([
      `Task: ${task.title}`,
      `Status: **${label}** (${status}) — ${boundText(input.reason)}`,
      `Total iterations: ${cp.iteration}/${input.maxIterations}`,
      `Active time: ${duration(cp.elapsedMs)}`,
      `Commits: ${cp.commits}${cp.baseCommit ? ` (since ${cp.baseCommit.slice(0, 8)})` : ''}`,
    ]),
  );
  out.push(
    `## Task\n**Prompt**\n\n${fence(task.prompt)}\n\n**Promise**\n\n${fence(task.promise)}${task.check ? `\n\n**Check** (a required gate of this task): \`${task.check}\`` : ''}`,
  );
  const last = [...cp.history].reverse().find((r) => r.gates.length > 0);
  out.push(qualitySummary(last));
  if (input.merge)
    out.push(
      `## Merge queue\n${input.merge.outcome}${input.merge.gates?.length ? `\n\n${list(input.merge.gates.map((g) => `${g.name}: ${g.passed ? 'yes' : 'no'} — ${g.summary}`))}` : ''}`,
    );
  if (cp.proof) out.push(proofSection(cp.proof));
  out.push(...baseSections(last));
  out.push(...gateChanges(cp, last));
  // the receipt supersedes the plain usage table (it prices cached input and shows the provider's figure)
  out.push(cp.receipt ? renderReceipt(cp.receipt) : usageTable(cp, config));
  out.push(`## Escalation history\n${list(input.escalations)}`);
  out.push(filesSection(input.files));
  // model faults (quota, auth, outage… told apart in the message) and cut-short iterations, as recorded
  const faults = cp.history.filter((r) => r.error).map((r) => `iteration ${r.iteration} (${r.model}): ${r.error}`);
  const fallbackModels = new Set(config.llm.fallback.map((f) => f.model).filter((m) => !config.llm.models.includes(m)));
  const servedByFallback = Object.entries(cp.modelUsage)
    .filter(([model]) => fallbackModels.has(model))
    .map(([model, u]) => `\`${model}\` (llm.fallback) served ${u.calls} call${u.calls === 1 ? '' : 's'} while the primary was failing`);
  if (faults.length || servedByFallback.length) out.push(`## Errors and model faults\n${list([...servedByFallback, ...faults])}`);
  const tampered = cp.history.flatMap((r) => r.tampering.map((t) => `iteration ${r.iteration}: ${t}`));
  if (tampered.length)
    out.push(`## Tampering (restored)\nThe agent's commands or the gates changed control files; each was put back.\n\n${list(tampered)}`);
  if (input.observations?.length)
    out.push(
      `## Observations (low-severity findings)\nLogged in \`.ralph/observations.md\`; they never block a task.\n\n${list(input.observations)}`,
    );
  out.push('## Iterations');
  out.push(
    table(
      ['#', 'Started', 'Duration', 'Model', 'Signal', 'Gates', 'Outcome'],
      cp.history.map((r) => [
        String(r.iteration),
        r.startedAt.slice(11, 19),
        duration(r.durationMs),
        r.model,
        r.signal ?? '(no signal)',
        r.gates.length ? `${r.gates.filter((g) => g.passed).length}/${r.gates.length} pass` : '—',
        r.outcome,
      ]),
    ),
  );
  if (cp.history.length > 0 && cp.history[0].iteration > 1) out.push(`_Earlier iterations are in the iteration reports and run logs._`);
  return `${out.join('\n\n')}\n`;
}

/** Seed 003's quality summary: a yes/no line per gate with its counts, then the table. */
function qualitySummary(last: IterationRecord | undefined): string {
  if (!last) return '## Quality summary\n_no gates ran_';
  const lines = last.gates.map(
    (g) =>
      `${GATE_QUESTION[g.kind] ?? `${g.name} passes`} (${g.name}${g.required ? '' : ', optional'}): ${g.passed ? 'yes' : 'no'} — ${g.summary}`,
  );
  return `## Quality summary\nGates of iteration ${last.iteration}:\n\n${list(lines)}\n\n${table(
    ['Gate', 'Required', 'Result', 'Details'],
    last.gates.map((g) => [g.name, g.required ? 'yes' : 'no', g.passed ? '✓ pass' : '✗ FAIL', g.summary]),
  )}`;
}

const GATE_QUESTION: Record<string, string> = {
  tests: 'All tests passing',
  types: 'No type errors',
  lint: 'No lint errors',
  security: 'No blocking security findings',
  coverage: 'Coverage at its threshold',
};

/** Pre-existing failures (named, not held against the task) and flaky tests of the last gate run. */
function baseSections(last: IterationRecord | undefined): string[] {
  const out: string[] = [];
  const why = (g: IterationRecord['gates'][number], n: string) => g.baseFailures?.find((b) => b.name === n)?.why;
  const pre = (last?.gates ?? []).flatMap((g) =>
    (g.preExisting ?? []).map((n) => `**${g.name}**: \`${n}\`${why(g, n) ? ` — ${why(g, n)}` : ''}`),
  );
  if (pre.length)
    out.push(
      `## Pre-existing failures\nAlready failing at the task's base and still failing, the same tests: shown unrelated to the task (or declared so by a person), not held against it.\n\n${list(pre)}`,
    );
  const held = (last?.gates ?? []).flatMap((g) =>
    (g.baseFailures ?? []).filter((b) => b.held).map((b) => `**${g.name}**: \`${b.name}\` — ${b.why}`),
  );
  if (held.length)
    out.push(
      `## Failing since the base, held against the task\nThese tests failed at the task's base too, and nothing shows they are unrelated to it.\n\n${list(held)}`,
    );
  const flaky = (last?.gates ?? []).flatMap((g) => (g.flaky ?? []).map((n) => `**${g.name}**: \`${n}\``));
  if (flaky.length) out.push(`## Flaky tests\nFailed, then passed when the gate ran again (gates[].rerunFailures).\n\n${list(flaky)}`);
  return out;
}

/**
 * What the task changed in its gates, from the last gate run: allowed changes (what the gates
 * check now differs from the base) and weakenings still in place when the task ended.
 */
function gateChanges(cp: Checkpoint, last: IterationRecord | undefined): string[] {
  if (!cp.integrity) return [];
  const allowed = (last?.gates ?? []).flatMap((g) => (g.integrity?.allowed ?? []).map((v) => `**${g.name}**: ${v}`));
  const weakened = (last?.gates ?? []).flatMap((g) => (g.integrity?.violations ?? []).map((v) => `**${g.name}**: ${v}`));
  const out = [
    '## Gate integrity',
    `Judged against the base taken ${cp.integrity.takenAt} (${cp.integrity.gates.map((g) => `${g.gate}${g.tests ? `: ${g.tests.total - g.tests.skipped} tests run` : ''}`).join(', ') || 'no required gates'}).`,
  ];
  if (allowed.length) out.push(`**Gate changes the task was allowed to make**\n\n${list(allowed)}`);
  if (weakened.length) out.push(`**Gates weakened when the task ended**\n\n${list(weakened)}`);
  if (!allowed.length && !weakened.length) out.push('_The gates check what they checked at the base._');
  return [out.join('\n\n')];
}

/** Seed 003's files changed, as counts, with the files under them. */
function filesSection(files: FinalReportInput['files']): string {
  const product = (list_: string[]) => list_.filter((f) => !f.startsWith('.ralph/'));
  const [added, modified, deleted] = [product(files.added), product(files.modified), product(files.deleted)];
  // the counts are whole; the names past STORED_FILES_MAX are one line with their count
  const named = (title: string, fs: string[]) =>
    `**${title}: ${fs.length}**\n${list(summarizedFiles(fs).map((f, i) => (i < STORED_FILES_MAX ? `\`${f}\`` : f)))}`;
  return `## Files changed\n${named('Created', added)}\n\n${named('Modified', modified)}\n\n${named('Deleted', deleted)}`;
}

function usageTable(cp: Checkpoint, config: RalphConfig): string {
  const rows = Object.entries(cp.modelUsage).map(([model, u]) => [
    model,
    String(u.calls),
    String(u.promptTokens),
    String(u.completionTokens),
    costCell(estimateCostUsd(model, u, config.llm.prices, config.llm.provider), config.llm.provider),
  ]);
  const totalCost = Object.entries(cp.modelUsage).reduce<number | undefined>((sum, [model, u]) => {
    const cost = estimateCostUsd(model, u, config.llm.prices, config.llm.provider);
    return cost === undefined ? sum : (sum ?? 0) + cost;
  }, undefined);
  rows.push([
    '**total**',
    String(Object.values(cp.modelUsage).reduce((n, u) => n + u.calls, 0)),
    String(cp.usage.promptTokens),
    String(cp.usage.completionTokens),
    costCell(totalCost, config.llm.provider),
  ]);
  return `## Model usage\n${table(['Model', 'Calls', 'Prompt tokens', 'Completion tokens', 'Est. cost'], rows)}`;
}

/** A cost cell: the editor's models are paid by the editor's plan, so an unpriced one reads "included", not $0. */
function costCell(cost: number | undefined, provider: RalphConfig['llm']['provider']): string {
  return cost === undefined && provider === 'vscode' ? 'included (editor plan)' : formatUsd(cost);
}

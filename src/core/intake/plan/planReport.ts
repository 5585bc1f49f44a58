import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphPaths } from '../../paths';
import { list, table } from '../../reports/markdown';
import { renderReceipt } from '../../reports/receiptReport';
import type { CostReceipt } from '../../spend/receipt';
import type { Task } from '../../tasks/schema';
import { writeFileAtomic } from '../../util/atomicWrite';
import type { PlanDraft } from './planSchema';

/** A reply the planner could not use, as the report lists it. */
export interface RejectedReply {
  attempt: number;
  model: string;
  problems: string[];
}

export interface PlanReportInput {
  runId: string;
  document: string;
  section?: string;
  model: string;
  outcome: 'proposed' | 'refused' | 'failed';
  reason: string;
  draft?: PlanDraft;
  problems: string[];
  rejected: RejectedReply[];
  receipt: CostReceipt;
}

/** A planning run's files: `.ralph/reports/plans/<runId>.md` (the report) and `.json` (the proposal, until accepted). */
export function planFiles(paths: RalphPaths, runId: string): { report: string; draft: string } {
  const dir = path.join(paths.dir, 'reports', 'plans');
  return { report: path.join(dir, `${runId}.md`), draft: path.join(dir, `${runId}.json`) };
}

/** The planning run's report: a run step of its own, with what it proposed and what it cost. */
export function renderPlanReport(input: PlanReportInput): string {
  const out: string[] = [`# Plan — ${input.document}${input.section ? ` (section "${input.section}")` : ''}`];
  out.push(
    list([
      `Run: ${input.runId}`,
      `Model: ${input.model}`,
      `Outcome: **${input.outcome.toUpperCase()}** — ${input.reason}`,
      'Nothing is added to `.ralph/tasks.json` until a person accepts the plan.',
    ]),
  );
  const tasks = input.draft?.tasks ?? [];
  if (tasks.length > 0) {
    out.push('## Proposed tasks');
    out.push(
      table(
        ['#', 'Key', 'Title', 'Type', 'Complexity', 'Depends on', 'Check', 'Source'],
        tasks.map((t, i) => [
          String(i + 1),
          t.key,
          t.title,
          t.type,
          String(t.complexity),
          t.dependsOn.join(', ') || '—',
          t.check ? `\`${t.check}\`` : '—',
          t.source,
        ]),
      ),
    );
    const notes = tasks.flatMap((t) => t.notes.map((n) => `**${t.title}**: ${n}`));
    if (notes.length > 0) out.push(`### For the review\n${list(notes)}`);
  }
  if (input.problems.length > 0) out.push(`## Why it cannot be accepted as it is\n${list(input.problems)}`);
  if (input.draft?.notes) out.push(`## Notes from the model\n${input.draft.notes}`);
  if (input.rejected.length > 0)
    out.push(
      `## Replies that could not be used\n${list(input.rejected.map((r) => `attempt ${r.attempt} (${r.model}): ${r.problems.join('; ')}`))}`,
    );
  out.push(renderReceipt(input.receipt));
  return `${out.join('\n\n')}\n`;
}

/** Records on the report which tasks the person accepted (a report that is gone is not recreated). */
export async function noteAccepted(paths: RalphPaths, runId: string, tasks: readonly Task[]): Promise<void> {
  const file = planFiles(paths, runId).report;
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const lines = tasks.map((t) => `${t.id}: ${t.title}${t.dependsOn.length ? ` (after ${t.dependsOn.join(', ')})` : ''}`);
  await writeFileAtomic(file, `${text}\n## Accepted ${new Date().toISOString()}\n${list(lines)}\n`);
}

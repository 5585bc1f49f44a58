import type { Checkpoint } from '../record/checkpoint';
import type { Task, TaskStatus } from '../tasks/schema';

/** GitHub refuses pull request bodies past 65,536 characters. */
const BODY_LIMIT = 60_000;

export interface PullRequestText {
  title: string;
  body: string;
}

export interface PullRequestFacts {
  task: Task;
  /** How the job's run ended for the task (done: COMPLETE with the required gates green). */
  status: TaskStatus;
  reason: string;
  checkpoint?: Checkpoint;
  finalReport?: string;
  /** The job's page. */
  runUrl?: string;
}

/** The marker that ties a pull request to its task (read back by `ralph remote`). */
export function taskMarker(taskId: string): string {
  return `<!-- ralph-task: ${taskId} -->`;
}

/**
 * The pull request of a task: the final report (with its cost receipt), the gate verdicts of the
 * last iteration with their integrity findings, and the proof the completion rests on.
 */
export function pullRequestText(f: PullRequestFacts): PullRequestText {
  const { task, checkpoint: cp } = f;
  const done = f.status === 'done';
  const title = `ralph(${task.id}): ${task.title}`;
  const last = cp?.history.at(-1);
  const head = [
    taskMarker(task.id),
    `## Ralph task ${task.id}: ${task.title}`,
    '',
    `**${done ? '✅ Done' : `⚠️ ${f.status}`}** — ${f.reason}${cp ? ` (iteration ${cp.iteration}${task.maxIterations ? `/${task.maxIterations}` : ''})` : ''}.`,
    done
      ? 'Auto-merge is on: the merge queue lands it once the required checks pass on the merged result.'
      : 'A draft: the task did not finish. Retry dispatches it again and it resumes from its state (branch `ralph-state/' + task.id + '`).',
    ...(f.runUrl ? ['', `Job: ${f.runUrl}`] : []),
    '',
    '### Promise',
    '',
    quote(task.promise),
  ];
  const gates =
    last && last.gates.length > 0
      ? gateTable(last.gates, last.iteration)
      : ['### Gate verdicts', '', '_no gates ran in the last iteration_'];
  const proof = proofLines(f);
  const report = f.finalReport ? ['', '<details><summary>Final report</summary>', '', f.finalReport.trim(), '', '</details>'] : [];
  let body = [...head, '', ...gates, '', ...proof, ...report, ''].join('\n');
  if (body.length > BODY_LIMIT)
    body = `${body.slice(0, BODY_LIMIT)}\n\n… (cut: the whole report is in the job's summary and on ralph-state/${task.id})\n</details>\n`;
  return { title, body };
}

function gateTable(gates: NonNullable<Checkpoint['history'][number]['gates']>, iteration: number): string[] {
  const rows = gates.map(
    (g) =>
      `| ${cell(g.name)} | ${g.kind} | ${g.required ? 'yes' : 'no'} | ${g.passed ? '✅ pass' : '❌ fail'} | ${cell(g.summary)}${integrityCell(g.integrity)} |`,
  );
  return [
    `### Gate verdicts (iteration ${iteration})`,
    '',
    '| Gate | Kind | Required | Result | Details |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ];
}

function integrityCell(integrity: { violations: string[]; allowed: string[] } | undefined): string {
  if (!integrity) return '';
  const parts = [...integrity.violations.map((v) => `weakened: ${v}`), ...integrity.allowed.map((v) => `allowed change: ${v}`)];
  return parts.length > 0 ? `<br>${cell(parts.join('; '))}` : '';
}

/**
 * What the completion rests on: the gates' record at the task's base next to the last run (tests
 * run, failing), the agent's own words, and the commits — each a fact the orchestrator recorded,
 * not the agent's claim.
 */
function proofLines(f: PullRequestFacts): string[] {
  const cp = f.checkpoint;
  const lines = ['### Proof', ''];
  if (!cp) return [...lines, '_no checkpoint: the task never ran an iteration_'];
  const last = cp.history.at(-1);
  for (const base of cp.integrity?.gates ?? []) {
    const now = last?.gates.find((g) => g.name === base.gate);
    const before = base.tests ? `${base.tests.total - base.tests.skipped} tests ran, ${base.tests.failed} failing` : 'no test counts';
    lines.push(
      `- **${base.gate}** at the base: ${before}; now: ${now ? now.summary : 'not run'}${now?.integrity?.violations.length ? ' (weakened: not accepted)' : ''}`,
    );
  }
  if (!cp.integrity) lines.push('- no gate baseline was recorded for this task (its gates were judged on their own)');
  lines.push(
    `- base commit: ${cp.baseCommit ? `\`${cp.baseCommit.slice(0, 10)}\`` : 'unknown'}; ${cp.commits} commit${cp.commits === 1 ? '' : 's'} over ${cp.iteration} iteration${cp.iteration === 1 ? '' : 's'}`,
  );
  if (last?.summary) lines.push('', "**The agent's last words**", '', quote(last.summary));
  return lines;
}

function quote(text: string): string {
  return text
    .trim()
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

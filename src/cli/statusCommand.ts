import { chainLines, readChainSnapshot } from '../core/loop/merge/mergeChainFile';
import { landCommand, waitsToLand } from '../core/loop/run/autopilotPerson';
import { parseLockInfo } from '../core/loop/run/runLockHolder';
import { openRalph, type Ralph } from '../core/ralph';
import { type ReceiptSummary, summarizeReceipt, sumLines } from '../core/spend/receipt';
import { describeLine } from '../core/spend/receiptFormat';
import { openQuestion } from '../core/tasks/questions';
import { type Task, TASK_STATUSES } from '../core/tasks/schema';
import { readTextIfExists } from '../core/util/atomicWrite';
import type { CliIo } from './io';
import { personLines } from './personStatus';
import { runLockStatus } from './runLockStatus';
import { taskVerdicts, verdictLines } from './statusVerdicts';

/** What `ralph status` reports, gathered once for both of its forms (words and `--json`). */
interface StatusFacts {
  tasks: Task[];
  counts: Record<string, number>;
  /** The run lock as it is on disk (null: none, or unreadable). */
  running: unknown;
  run: Awaited<ReturnType<typeof runLockStatus>>;
  active: ActiveTask[];
  worktrees: { taskId: string; path: string; branch?: string; status?: string }[];
  receipts: Record<string, ReceiptSummary>;
  spent: ReturnType<typeof sumLines>;
  verdicts: Awaited<ReturnType<typeof taskVerdicts>>;
  mergeChain: Awaited<ReturnType<typeof readChainSnapshot>>;
}

interface ActiveTask {
  id: string;
  status: string;
  iteration: number;
  phase?: string;
  tokens: number;
  queued: boolean;
}

/** `ralph status [--json]`: the tasks by status, the run (as its lock shows it), active work, worktrees, the merge chain, what waits for the person, verdicts and spend. */
export async function printStatus(workspace: string, json: boolean, io: CliIo): Promise<void> {
  const facts = await gather(openRalph(workspace));
  if (json) io.out(JSON.stringify(asJson(facts), null, 2));
  else for (const line of asText(facts)) io.out(line);
}

async function gather(ralph: Ralph): Promise<StatusFacts> {
  const { paths, checkpoints } = ralph;
  const tasks = await ralph.store.list();
  const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, tasks.filter((t) => t.status === s).length]));
  const lockText = await readTextIfExists(paths.lock);
  const running = lockText ? safeJson(lockText) : null;
  const active: ActiveTask[] = [];
  for (const task of tasks.filter((t) => t.status === 'in_progress' || t.status === 'halted')) {
    const cp = await checkpoints.load(task.id);
    // an agent that completed waits for the merge queue: done only once its work is on the target
    const queued = task.status === 'in_progress' && cp?.phase === 'between' && cp.history.at(-1)?.outcome === 'complete';
    const iteration = cp?.iteration ?? task.iterations;
    active.push({ id: task.id, status: task.status, iteration, phase: cp?.phase, tokens: cp?.usage.totalTokens ?? 0, queued });
  }
  const listed = await ralph
    .worktrees()
    .list()
    .catch(() => []);
  const worktrees = listed.map((w) => ({
    taskId: w.taskId,
    path: paths.relative(w.path),
    branch: w.branch,
    status: tasks.find((t) => t.id === w.taskId)?.status,
  }));
  // every task that ran keeps its receipt in its checkpoint
  const receipts: Record<string, ReceiptSummary> = {};
  for (const task of tasks.filter((t) => t.iterations > 0)) {
    const receipt = (await checkpoints.load(task.id))?.receipt;
    if (receipt) receipts[task.id] = summarizeReceipt(receipt);
  }
  return {
    tasks,
    counts,
    running,
    run: await runLockStatus(lockText ? parseLockInfo(lockText) : undefined),
    active,
    worktrees,
    receipts,
    spent: sumLines(Object.values(receipts).map((r) => r.total)),
    verdicts: await taskVerdicts(tasks, checkpoints),
    mergeChain: await readChainSnapshot(paths),
  };
}

function asJson(facts: StatusFacts): unknown {
  const { tasks, counts, running, run, active, worktrees, receipts, spent, verdicts, mergeChain } = facts;
  const questions = tasks
    .filter((t) => t.status === 'needs_help' || t.status === 'blocked')
    .map((t) => ({ taskId: t.id, status: t.status, question: openQuestion(t.questions) ?? { question: t.blockedReason } }));
  const reviews = tasks.filter((t) => t.status === 'review').map((t) => ({ taskId: t.id, title: t.title, reason: t.blockedReason }));
  const landing = tasks
    .filter(waitsToLand)
    .map((t) => ({ taskId: t.id, title: t.title, reason: t.blockedReason, command: landCommand(t.id) }));
  return {
    counts,
    running,
    runState: run.state,
    active,
    worktrees,
    tasks,
    receipts,
    spent,
    questions,
    reviews,
    landing,
    verdicts,
    ...(mergeChain ? { mergeChain } : {}),
  };
}

function asText(facts: StatusFacts): string[] {
  const { tasks, counts, run, active, worktrees, receipts, spent, verdicts, mergeChain } = facts;
  const byStatus = TASK_STATUSES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  const lines = [`${tasks.length} task${tasks.length === 1 ? '' : 's'}: ${byStatus.join(', ') || 'none'}`, run.line];
  for (const a of active) {
    const where = a.queued ? 'queued for merge' : a.status;
    lines.push(`  ${a.id} ${where} at iteration ${a.iteration}${a.status === 'in_progress' ? phaseNote(a.phase, run.state) : ''}`);
  }
  // a chain whose run may still be at work is shown as it is now, else as the last run left it
  if (mergeChain) lines.push(...chainLines(mergeChain, run.state === 'active' || run.state === 'other-host'));
  for (const w of worktrees)
    lines.push(`  worktree ${w.path} (${w.branch ?? 'detached'}) of ${w.taskId}${w.status ? ` — ${w.status}` : ' — no such task'}`);
  lines.push(...personLines(tasks), ...verdictLines(verdicts));
  const spenders = Object.keys(receipts).length;
  if (spenders > 0)
    lines.push(`spent by ${spenders} task${spenders === 1 ? '' : 's'} (see their final reports for the receipts): ${describeLine(spent)}`);
  return lines;
}

/**
 * Where an in-progress task's iteration stands, from its checkpoint: with a run at work, talking to
 * the model, or past its model run (its gates running; in a parallel run its agent slot went to
 * another task meanwhile); with none, where the run that held it was interrupted.
 */
function phaseNote(phase: string | undefined, run: Awaited<ReturnType<typeof runLockStatus>>['state']): string {
  const live = run === 'active' || run === 'other-host';
  if (phase === 'running') return live ? ' (talking to the model)' : ' (interrupted mid-iteration)';
  if (phase === 'committing')
    return live
      ? ' (on its gates, not talking to the model)'
      : ' (interrupted after its model run: its commit and gates are finished on resume)';
  return '';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

import { withTaskTrailer } from '../git/taskCommits';
import { buildIterationMessages, pinnedRequest } from '../agent/context';
import { contentFilterFeedback, type IterationRunResult, runIteration } from '../agent/iteration';
import { faultLabel } from '../llm/faults';
import { BudgetExceededError } from '../spend/budget';
import { type WindDownCause, type WindDownResult, windDownTurn } from './windDown';
import type { ToolContext } from '../agent/tools/types';
import { errorMessage, type ModelFaultKind } from '../errors';
import type { ChatMessage } from '../llm/types';
import { GitLockHeldError, underGitLockRule } from '../git/lockRule';
import type { IntegrityBaseline } from '../gates/integrity';
import type { GateReport } from '../gates/types';
import { decisiveSignal } from '../signals/parser';
import { formatSignal, type Signal } from '../signals/types';
import type { TamperFinding } from '../guards/controlFileGuard';
import type { CommitInfo } from '../git/gitService';
import type { Task } from '../tasks/schema';
import { readTextIfExists } from '../util/atomicWrite';
import type { Checkpoint, IterationRecord, PendingCommit } from '../record/checkpoint';
import { decideCompletion } from './completionPolicy';
import type { CompletionDecision } from '../reports/decision';
import { goneTestsQuestion } from './goneTestQuestion';
import { gateSummary, isFinalSignal, optionalIterationsLeft, runGatesUnlessFinal } from './iterationGates';
import { runHaltReason } from './runHalt';
import { proofStep } from './proofStep';
import type { TaskLoopServices } from './types';

export interface IterationStepResult {
  record: IterationRecord;
  decision: CompletionDecision | undefined;
  gates: GateReport | undefined;
  timedOut: boolean;
  /** Model calls this iteration made, for the per-model usage table. */
  calls: number;
  /** The provider fault that ended the iteration when it halts the task (auth, quota). */
  fault?: ModelFaultKind;
  /** The commit met a git lock that stayed held: the iteration is not over, its write-ahead record finishes it on resume. */
  uncommitted?: boolean;
  /** Why the whole run stops here (a lock in the working tree every task shares). */
  runHalt?: string;
  /** The integrity baseline the iteration waited for before its gates (to keep in the checkpoint). */
  integrity?: IntegrityBaseline;
}

export interface IterationStepInput {
  task: Task;
  cp: Checkpoint;
  iteration: number;
  maxIterations: number;
  model: string;
  remainingMs: number;
  /** The task's whole time limit: a slice of it is kept for the wind-down turn, so that the turn too ends within it. */
  limitMs?: number;
  stop: AbortSignal;
  /** The model run of this iteration, recorded before a commit the process did not live past: no new model call. */
  replay?: PendingCommit;
  /** Writes the model run ahead of the commit (the checkpoint's `committing` phase). */
  beforeCommit?: (pending: PendingCommit) => Promise<void>;
  /** The integrity baseline still being taken beside this iteration (`AsideBaseline`): its gates wait for it. */
  baseline?: Promise<IntegrityBaseline | undefined>;
}

/**
 * One iteration from start to verdict: fresh context → tool conversation → commit →
 * quality gates → completion decision. Returns what the checkpoint and reports record.
 */
export async function runIterationStep(services: TaskLoopServices, input: IterationStepInput): Promise<IterationStepResult> {
  const { task, iteration: n, maxIterations, model, stop } = input;
  const startedAt = input.replay ? Date.parse(input.replay.startedAt) || services.clock.now() : services.clock.now();
  services.guard.begin(task.id, n);
  services.emit({ type: 'iteration.started', taskId: task.id, iteration: n, maxIterations, model });

  const { run, signal, windDown, progressFile } = await converse(services, input);
  // the commit's `git status` runs while the write-ahead checkpoint is written: it only reads the
  // working tree, and the checkpoint is not in it (a failed check is taken again by the commit)
  const changed = !input.replay && services.config.loop.commitEachIteration ? services.git.hasChangesToCommit().catch(() => undefined) : undefined;
  if (input.replay) {
    services.emit({ type: 'warning', taskId: task.id, code: 'iteration-resumed-after-model', message: `iteration ${n}'s model run was recorded before the process ended; finishing it without calling the model again` });
  } else if (!run.stopped) {
    await input.beforeCommit?.({ iteration: n, model, startedAt: new Date(startedAt).toISOString(), run });
  }

  const committed = (input.replay && (await committedAlready(services, task, n))) || (await commitIteration(services, task, n, await changed));
  const commit = 'error' in committed ? undefined : committed.commit;
  const signalGiven = decisiveSignal(run.signals);
  const feedback = iterationFeedback(services, run, windDown, progressFile);
  const base = {
    iteration: n,
    startedAt: new Date(startedAt).toISOString(),
    model,
    signal: signalGiven ? formatSignal(signalGiven) : undefined,
    progress: lastProgress(run.signals),
    commit: commit?.sha,
    filesChanged: commit?.files ?? [],
    error: run.error,
    summary: run.finalText ? abbreviate(run.finalText, 600) : undefined,
    usage: run.usage,
    gates: [] as IterationRecord['gates'],
    tampering: [] as string[],
    failingTests: [] as string[],
    failed: false,
    highFinding: false,
  };
  const finishRecord = (rest: Pick<IterationRecord, 'outcome' | 'feedback'> & Partial<IterationRecord>): IterationRecord => {
    // gates ran by now: everything restored in this iteration is reported, and fed back
    const tampering = tamperingLines(services.guard.drain());
    return {
      ...base,
      ...rest,
      feedback: tampering.length ? [tamperingFeedback(tampering), ...rest.feedback] : rest.feedback,
      tampering,
      durationMs: Math.max(0, services.clock.now() - startedAt),
    };
  };

  if (run.stopped) {
    if (stop.aborted) return { record: finishRecord({ outcome: 'stopped', feedback }), decision: undefined, gates: undefined, timedOut: false, calls: run.steps };
    const error = 'the task timeout was reached during the iteration';
    return { record: finishRecord({ outcome: 'error', error, feedback }), decision: undefined, gates: undefined, timedOut: true, calls: run.steps };
  }

  if (run.error !== undefined && run.fault && HALTING_FAULTS.has(run.fault)) {
    // another iteration would fail the same way (key, quota, no consent, no such model, rate limit
    // outlasting the retries): the task halts at once with the provider's message
    const error = run.error ?? 'the model provider refused the call';
    const reason = error.includes(`(${faultLabel(run.fault)})`) ? error : `${faultLabel(run.fault)}: ${error}`;
    const decision: CompletionDecision = { kind: 'finish', status: 'halted', reason, notes: [] };
    return { record: finishRecord({ outcome: 'error', error: run.error, feedback, decision: reason }), decision, gates: undefined, timedOut: false, calls: run.steps, fault: run.fault };
  }

  if ('error' in committed) {
    // never gates, never done on work that is not in git: the task halts with the cause
    const reason = committed.error;
    const decision: CompletionDecision = { kind: 'finish', status: 'halted', reason, notes: [] };
    const uncommitted = committed.lockHeld ? { uncommitted: true, ...(committed.sharedTree ? { runHalt: reason } : {}) } : {};
    return { record: finishRecord({ outcome: 'error', error: reason, feedback, decision: reason }), decision, gates: undefined, timedOut: false, calls: run.steps, ...uncommitted };
  }

  return judgeIteration(services, input, { run, signal, signalGiven, feedback, finishRecord, progress: base.progress });
}

/** What the agent's conversation of an iteration came to, with its wind-down turn when it was cut short. */
interface Conversation {
  run: IterationRunResult;
  /** The iteration's stop: the person's Stop, or the task's time limit (less the wind-down reserve). */
  signal: AbortSignal;
  windDown: (WindDownResult & { cause: WindDownCause; reason: string }) | undefined;
  progressFile: string;
}

/** Fresh context → the tool conversation (or its recorded run, on a replay), with a wind-down turn when it is cut short. */
async function converse(services: TaskLoopServices, input: IterationStepInput): Promise<Conversation> {
  const { task, cp, iteration: n, maxIterations, model, stop } = input;
  const work = services.work ?? services.paths;
  // wall time, not the (possibly simulated) clock: the deadline is a real one
  const endsAt = Date.now() + input.remainingMs;
  const timeout = AbortSignal.timeout(Math.max(1, input.remainingMs - windDownReserveMs(services.config.loop.windDownSeconds, input.limitMs ?? input.remainingMs)));
  const signal = AbortSignal.any([stop, timeout]);
  const messages = buildIterationMessages({
    task,
    iteration: n,
    maxIterations,
    progressFile: work.relative(work.progress(task.id)),
    progressNotes: (await readTextIfExists(work.progress(task.id))) ?? '',
    previous: cp.history.at(-1),
    recentCommits: await services.git.log(5).catch(() => []),
  });
  const toolContext: ToolContext = {
    scope: services.scope,
    commands: services.commands,
    // the trailer lets a rollback find the agents' own commits of this task
    commit: (message) => services.guard.orchestratorCommit(() => services.git.commitAll(withTaskTrailer(message, task.id))),
    commandTimeoutMs: services.config.commands.timeoutMs,
    maxOutputChars: services.config.commands.maxOutputChars,
    signal,
  };
  const progressFile = work.relative(work.progress(task.id));
  let windDown: (WindDownResult & { cause: WindDownCause; reason: string }) | undefined;
  const onInterrupted = async (conversation: readonly ChatMessage[], error?: unknown) => {
    const cause: WindDownCause | undefined = error instanceof BudgetExceededError ? 'budget' : error !== undefined ? undefined : stop.aborted ? 'stop' : timeout.aborted ? 'timeout' : undefined;
    if (!cause || windDown) return;
    const reason = cause === 'budget' ? errorMessage(error) : cause === 'stop' ? stopCause(stop) : `the task timeout (${services.config.loop.taskTimeoutMinutes} min) was reached`;
    const turn = await windDownTurn(services, { taskId: task.id, iteration: n, cause, reason, model, messages: conversation, progressFile, toolContext, leftMs: endsAt - Date.now() });
    if (turn) windDown = { ...turn, cause, reason };
  };
  const run: IterationRunResult = input.replay ? input.replay.run : await runIteration(messages, {
    model: services.model,
    modelName: model,
    temperature: services.config.llm.temperature,
    registry: services.registry,
    toolContext,
    maxSteps: services.config.llm.maxStepsPerIteration,
    taskId: task.id,
    iteration: n,
    signal,
    emit: services.emit,
    request: pinnedRequest(task),
    compaction: { contextWindow: services.config.llm.contextWindow, compactAt: services.config.llm.compactAt },
    pause: services.pause,
    onInterrupted,
  });
  return { run, signal, windDown, progressFile };
}

/** What the next iteration is told about this one: the step limit, failed tool calls, the content filter, a wind-down. */
function iterationFeedback(services: TaskLoopServices, run: IterationRunResult, windDown: Conversation['windDown'], progressFile: string): string[] {
  const feedback: string[] = [];
  if (run.stepLimitHit) feedback.push(`The previous iteration hit the step limit (${services.config.llm.maxStepsPerIteration} model calls) before finishing; work in smaller steps and keep notes.`);
  if (run.toolErrors > 0) feedback.push(`${run.toolErrors} of ${run.toolCalls} tool calls failed in the previous iteration.`);
  if (run.fault === 'content_filter' && run.error) feedback.push(contentFilterFeedback('request or reply of the previous iteration'));
  if (windDown) {
    feedback.push(`The previous iteration was cut short (${windDown.reason}); ${windDown.wrote.length > 0 ? `you wrote your progress notes in a wind-down turn (${progressFile}): start from them` : 'no progress notes were written in the wind-down turn: check the working tree and the commits before going on'}.`);
  }

  return feedback;
}

/** The iteration's work is committed: gates, the completion decision, the proof. */
async function judgeIteration(
  services: TaskLoopServices,
  input: IterationStepInput,
  done: { run: IterationRunResult; signal: AbortSignal; signalGiven: Signal | undefined; feedback: string[]; finishRecord: (rest: Pick<IterationRecord, 'outcome' | 'feedback'> & Partial<IterationRecord>) => IterationRecord; progress: number | undefined },
): Promise<IterationStepResult> {
  const { task, iteration: n } = input;
  const { run, signal, signalGiven, feedback, finishRecord } = done;
  // the baseline taken beside the first iteration: the gates run meanwhile, their verdicts wait for it
  const aside = !input.cp.integrity && !isFinalSignal(signalGiven) ? input.baseline : undefined;
  const gates = await runGatesUnlessFinal(services, task, input.cp, n, signalGiven, signal, aside);
  const integrity = await aside;
  const cp = integrity ? { ...input.cp, integrity } : input.cp;
  const kept = integrity ? { integrity } : {};
  const decided = decideCompletion({
    signal: signalGiven,
    errored: run.error !== undefined,
    gates,
    optionalIterationsLeft: (name) => optionalIterationsLeft(services, cp, name),
  });
  // a passing test left out again after the agent was told: a person decides, the loop does not burn its iterations
  const judged: CompletionDecision = (decided.kind === 'continue' && goneTestsQuestion(task, gates, cp.history.at(-1))) || decided;
  const { decision, proof } = await proofStep(services, task, cp, n, judged, gates, signal);
  const gateSummaries = (gates?.outcomes ?? []).map(gateSummary);
  const gateFacts = {
    gates: gateSummaries,
    // failures already there at the base are the same every iteration: they are no sign of a stuck loop
    failingTests: (gates?.outcomes ?? []).flatMap((o) => o.parsed.tests?.failures.map((f) => f.name).filter((name) => !o.preExisting?.includes(name)) ?? []),
    highFinding: gates?.high ?? false,
    ...(proof ? { proof } : {}),
  };
  if (decision.kind === 'finish') {
    const outcome = decision.status === 'done' ? 'complete' : decision.status === 'halted' ? 'error' : decision.status;
    const progress = decision.status === 'done' ? 100 : done.progress;
    return {
      record: finishRecord({ outcome, progress, feedback: [...decision.notes, ...feedback], decision: decision.reason, ...gateFacts }),
      decision,
      gates,
      timedOut: false,
      calls: run.steps,
      ...kept,
    };
  }
  return {
    ...kept,
    record: finishRecord({ outcome: run.error ? 'error' : 'continue', feedback: [...decision.feedback, ...feedback], decision: decision.reason, ...gateFacts }),
    decision,
    gates,
    timedOut: false,
    calls: run.steps,
  };
}

/**
 * The part of the task's time limit kept for the wind-down turn: `loop.windDownSeconds`, at most a
 * tenth of the limit. The iteration's own deadline comes that much earlier, so the turn ends by the limit.
 */
export function windDownReserveMs(windDownSeconds: number, limitMs: number): number {
  return Math.max(0, Math.min(windDownSeconds * 1000, limitMs / 10));
}

/** The iteration's own commit, when a killed process made it before recording it. */
async function committedAlready(services: TaskLoopServices, task: Task, n: number): Promise<{ commit: CommitInfo } | undefined> {
  const [head] = await services.git.log(1).catch(() => []);
  if (head?.message !== iterationMessage(task, n)) return undefined;
  const changes = await services.git.changesSince(`${head.sha}~1`).catch(() => undefined);
  const files = changes ? [...changes.added, ...changes.modified, ...changes.deleted] : [];
  return { commit: { sha: head.sha, files } };
}

function iterationMessage(task: Task, n: number): string {
  return `ralph(${task.id}): iteration ${n}`;
}

/**
 * Commits the iteration's work (`changed`: what the `git status` taken alongside the write-ahead
 * checkpoint said). A failure is the iteration's failure (returned, not swallowed). git's locks
 * follow the one rule (`underGitLockRule`): a stale `index.lock` no live git process holds is
 * cleared and the commit tried again; one that stays held stops the commit with the way out.
 */
async function commitIteration(services: TaskLoopServices, task: Task, n: number, changed: boolean | undefined): Promise<{ commit: CommitInfo | undefined } | CommitFailure> {
  if (!services.config.loop.commitEachIteration) return { commit: undefined };
  const message = iterationMessage(task, n);
  const root = (services.work ?? services.paths).workspace;
  let hint = changed;
  try {
    const commit = await underGitLockRule(
      root,
      () => {
        const known = hint;
        hint = undefined; // a retry looks again
        return services.guard.orchestratorCommit(() => services.git.commitAll(message, known));
      },
      {
        where: services.work ? `the worktree of ${task.id}` : 'your working tree',
        shown: (file) => services.paths.relative(file),
        onCleared: ({ file, ageMs }) => services.emit({ type: 'warning', taskId: task.id, code: 'git-lock-cleared', message: `removed a stale ${services.paths.relative(file)} (${Math.round(ageMs / 1000)} s old, no git process works in this repository) and committed again` }),
      },
    );
    if (commit) services.emit({ type: 'git.commit', taskId: task.id, iteration: n, sha: commit.sha, message, files: commit.files });
    if (commit?.withheld) services.emit({ type: 'warning', taskId: task.id, code: 'secret-withheld', message: `not committed, they hold a secret value: ${commit.withheld.join(', ')}` });
    return { commit };
  } catch (error) {
    const held = error instanceof GitLockHeldError;
    const text = `could not commit iteration ${n}: ${errorMessage(error).trim()}${held ? ` (resume with: ralph run --task ${task.id}; iteration ${n} is committed then, without a new model call)` : ''}; the iteration's changes are uncommitted in the working tree`;
    services.emit({ type: 'warning', taskId: task.id, code: 'commit-failed', message: text });
    return { error: text, lockHeld: held, sharedTree: services.work === undefined };
  }
}

interface CommitFailure {
  error: string;
  /** A git lock that stayed held: the iteration is finished by the next run from its write-ahead record. */
  lockHeld: boolean;
  /** The commit was in the user's working tree, which every task shares: the run cannot go on. */
  sharedTree: boolean;
}

function tamperingLines(found: readonly TamperFinding[]): string[] {
  return [...new Set(found.map((f) => `${f.file} ${f.change} while ${f.during} ran`))];
}

function tamperingFeedback(lines: readonly string[]): string {
  return `Tampering: the orchestrator's control files were changed and have been restored (${lines.join('; ')}). The task list, the config, the checkpoints and git's configuration and hooks are not yours to change: do the task in the workspace's own files.`;
}

/** Who stopped the iteration: the user, or the run halting itself (the abort's reason says which). */
function stopCause(stop: AbortSignal): string {
  const halted = runHaltReason(stop);
  return halted ? `the run halted: ${halted}` : 'the user pressed Stop';
}

function lastProgress(signals: readonly Signal[]): number | undefined {
  const progress = [...signals].reverse().find((sig) => sig.kind === 'PROGRESS');
  return progress?.kind === 'PROGRESS' ? progress.percent : undefined;
}

function abbreviate(text: string, max: number): string {
  const flat = text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}

/** Model faults no further iteration can get past: the task halts (state saved) instead of looping on them. */
const HALTING_FAULTS: ReadonlySet<ModelFaultKind> = new Set<ModelFaultKind>(['consent', 'not_found', 'quota', 'auth', 'rate_limit']);

import type { IterationRunResult } from '../../agent/iteration';
import { faultLabel } from '../../llm/faults';
import type { ModelFaultKind } from '../../errors';
import type { IntegrityBaseline } from '../../gates/integrity';
import type { GateReport } from '../../gates/types';
import { decisiveSignal } from '../../signals/parser';
import { formatSignal, type Signal } from '../../signals/types';
import type { TamperFinding } from '../../guards/controlFileGuard';
import type { CommitInfo } from '../../git/gitService';
import type { IterationRecord, PendingCommit } from '../../record/checkpoint';
import { decideCompletion } from './completionPolicy';
import type { CompletionDecision } from '../../reports/decision';
import { withClaimRules } from './completeClaims';
import { goneTestsQuestion } from '../person/goneTestQuestion';
import { gateSummary, isFinalSignal, optionalIterationsLeft, runGatesUnlessFinal } from './iterationGates';
import { type CommitFailure, commitIteration, committedAlready } from './iterationCommit';
import { type ConversationInput, converse, iterationFeedback } from './iterationConversation';
import { environmentStop } from './environmentStop';
import { proofStep } from './proofStep';
import { gatesFor } from '../../gates/taskCheck';
import type { TaskLoopServices } from './types';
import type { AsideBaseline } from './baselineAside';

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

export interface IterationStepInput extends ConversationInput {
  /** Writes the model run ahead of the commit (the checkpoint's `committing` phase). */
  beforeCommit?: (pending: PendingCommit) => Promise<void>;
  /** The integrity baseline still being taken beside this iteration (`AsideBaseline`): its gates wait for it. */
  baseline?: Pick<AsideBaseline, 'ready' | 'settled'>;
}

/**
 * One iteration from start to verdict: fresh context → tool conversation → commit →
 * quality gates → completion decision. Returns what the checkpoint and reports record.
 */
export async function runIterationStep(services: TaskLoopServices, input: IterationStepInput): Promise<IterationStepResult> {
  const { task, iteration: n, maxIterations, stop } = input;
  // a task worked on by an agent CLI names the CLI and its model (`agentLabel`), not the built-in agent's
  const { model } = input;
  const startedAt = input.replay ? Date.parse(input.replay.startedAt) || services.clock.now() : services.clock.now();
  services.guard.begin(task.id, n);
  services.emit({ type: 'iteration.started', taskId: task.id, iteration: n, maxIterations, model, agent: input.agent.kind });

  const { run, signal, windDown, progressFile } = await converse(services, input);
  // the commit's `git status` runs while the write-ahead checkpoint is written: it only reads the
  // working tree, and the checkpoint is not in it (a failed check is taken again by the commit)
  const changed =
    !input.replay && services.config.loop.commitEachIteration ? services.git.hasChangesToCommit().catch(() => undefined) : undefined;
  if (input.replay) {
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'iteration-resumed-after-model',
      message: `iteration ${n}'s model run was recorded before the process ended; finishing it without calling the model again`,
    });
  } else if (!run.stopped) {
    await input.beforeCommit?.({ iteration: n, model, startedAt: new Date(startedAt).toISOString(), run });
  }

  const committed =
    (input.replay && (await committedAlready(services, task, n))) || (await commitIteration(services, task, n, await changed));
  const commit = 'error' in committed ? undefined : committed.commit;
  const signalGiven = decisiveSignal(run.signals);
  const feedback = iterationFeedback(services, run, windDown, progressFile);
  const base = {
    iteration: n,
    startedAt: new Date(startedAt).toISOString(),
    model,
    ...(run.agentSession ? { agentSession: run.agentSession } : {}),
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
  const finishRecord: FinishRecord = (rest) => {
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

  const ended = endedBeforeGates(run, committed, stop, feedback, finishRecord);
  if (ended) return ended;
  return judgeIteration(services, input, { run, signal, signalGiven, feedback, finishRecord, progress: base.progress });
}

/** Record finisher of an iteration: the fields that only its end knows, on top of what its run gave. */
type FinishRecord = (rest: Pick<IterationRecord, 'outcome' | 'feedback'> & Partial<IterationRecord>) => IterationRecord;

/**
 * The ends of an iteration that never reach the gates: a stop or the time limit during the model
 * run, a provider fault no further iteration gets past, a commit that failed. Undefined otherwise.
 */
function endedBeforeGates(
  run: IterationRunResult,
  committed: { commit: CommitInfo | undefined } | CommitFailure,
  stop: AbortSignal,
  feedback: string[],
  finishRecord: FinishRecord,
): IterationStepResult | undefined {
  if (run.stopped) {
    if (stop.aborted)
      return {
        record: finishRecord({ outcome: 'stopped', feedback }),
        decision: undefined,
        gates: undefined,
        timedOut: false,
        calls: run.steps,
      };
    const error = 'the task timeout was reached during the iteration';
    return {
      record: finishRecord({ outcome: 'error', error, feedback }),
      decision: undefined,
      gates: undefined,
      timedOut: true,
      calls: run.steps,
    };
  }

  if (run.error !== undefined && run.fault && HALTING_FAULTS.has(run.fault)) {
    // another iteration would fail the same way (key, quota, no consent, no such model, rate limit
    // outlasting the retries): the task halts at once with the provider's message
    const error = run.error ?? 'the model provider refused the call';
    const reason = error.includes(`(${faultLabel(run.fault)})`) ? error : `${faultLabel(run.fault)}: ${error}`;
    const decision: CompletionDecision = { kind: 'finish', status: 'halted', reason, notes: [] };
    return {
      record: finishRecord({ outcome: 'error', error: run.error, feedback, decision: reason }),
      decision,
      gates: undefined,
      timedOut: false,
      calls: run.steps,
      fault: run.fault,
    };
  }

  if ('error' in committed) {
    // never gates, never done on work that is not in git: the task halts with the cause
    const reason = committed.error;
    const decision: CompletionDecision = { kind: 'finish', status: 'halted', reason, notes: [] };
    const uncommitted = committed.lockHeld ? { uncommitted: true, ...(committed.sharedTree ? { runHalt: reason } : {}) } : {};
    return {
      record: finishRecord({ outcome: 'error', error: reason, feedback, decision: reason }),
      decision,
      gates: undefined,
      timedOut: false,
      calls: run.steps,
      ...uncommitted,
    };
  }
  return undefined;
}

/** The iteration's work is committed: gates, the completion decision, the proof. */
async function judgeIteration(
  services: TaskLoopServices,
  input: IterationStepInput,
  done: {
    run: IterationRunResult;
    signal: AbortSignal;
    signalGiven: Signal | undefined;
    feedback: string[];
    finishRecord: FinishRecord;
    progress: number | undefined;
  },
): Promise<IterationStepResult> {
  const { task, iteration: n } = input;
  const { run, signal, signalGiven, feedback, finishRecord } = done;
  // the baseline taken beside the first iteration: the gates run meanwhile, their verdicts wait for it —
  // unless the iteration claims nothing, another one follows and the run at the base is still going: then
  // a part of the suite goes on without it (unjudged, as every part), and a whole run still waits to be judged
  const pending = !input.cp.integrity && !isFinalSignal(signalGiven) ? input.baseline : undefined;
  const basePending = pending !== undefined && !pending.settled && signalGiven?.kind !== 'COMPLETE' && n < input.maxIterations;
  const aside = pending && !basePending ? pending.ready : undefined;
  // COMPLETE with gates to run: the merge queue may check the merged result meanwhile (decided once they pass)
  const claimed = signalGiven?.kind === 'COMPLETE' && services.checkAhead !== undefined && gatesFor(task, services.config.gates).length > 0;
  if (claimed) services.checkAhead!.claim(task.id, task.title);
  const gates = await runGatesUnlessFinal(services, task, input.cp, n, signalGiven, signal, aside, basePending ? pending.ready : undefined);
  // a whole run waited for the base run: its baseline is kept as when the iteration waited for it
  const taken = await (aside ?? (pending?.settled ? pending.ready : undefined));
  // a gate that cannot run here: the task stops, the baseline taken in that place is not kept (taken again once set right)
  const environment = environmentStop(taken, input.cp.integrity, gates);
  const integrity = environment ? undefined : taken;
  const cp = integrity ? { ...input.cp, integrity } : input.cp;
  const kept = integrity ? { integrity } : {};
  const decided: CompletionDecision = environment
    ? { kind: 'finish', status: 'halted', reason: environment, notes: [] }
    : decideCompletion({
        signal: signalGiven,
        errored: run.error !== undefined,
        gates,
        optionalIterationsLeft: (name) => optionalIterationsLeft(services, cp, name),
      });
  // a passing test left out again after the agent was told: a person decides, the loop does not burn its iterations
  const judged = await withClaimRules((decided.kind === 'continue' && goneTestsQuestion(task, gates, cp.history.at(-1))) || decided, {
    task,
    signal: signalGiven,
    gates,
    previous: cp.history.at(-1),
    root: (services.work ?? services.paths).workspace,
    base: cp.baseCommit,
  });
  const { decision, proof } = await proofStep(services, task, cp, n, judged, gates, signal);
  if (claimed && !(decision.kind === 'finish' && decision.status === 'done')) services.checkAhead!.drop(task.id, decision.reason);
  const gateFacts = gateFactsOf(gates, proof);
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
    record: finishRecord({
      outcome: run.error ? 'error' : 'continue',
      feedback: [...decision.feedback, ...feedback],
      decision: decision.reason,
      ...gateFacts,
    }),
    decision,
    gates,
    timedOut: false,
    calls: run.steps,
  };
}

/** What the iteration's record keeps of its gates and proof. */
function gateFactsOf(gates: GateReport | undefined, proof: IterationRecord['proof']): Partial<IterationRecord> {
  return {
    gates: (gates?.outcomes ?? []).map(gateSummary),
    // failures forgiven as unrelated are the same every iteration: no sign of a stuck loop (held ones are)
    failingTests: (gates?.outcomes ?? []).flatMap(
      (o) => o.parsed.tests?.failures.map((f) => f.name).filter((name) => !o.preExisting?.includes(name)) ?? [],
    ),
    highFinding: gates?.high ?? false,
    ...(proof ? { proof } : {}),
  };
}

function tamperingLines(found: readonly TamperFinding[]): string[] {
  return [...new Set(found.map((f) => `${f.file} ${f.change} while ${f.during} ran`))];
}

function tamperingFeedback(lines: readonly string[]): string {
  return `Tampering: the orchestrator's control files were changed and have been restored (${lines.join('; ')}). The task list, the config, the checkpoints and git's configuration and hooks are not yours to change: do the task in the workspace's own files.`;
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

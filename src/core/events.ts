import type { AgentKind } from './agentKinds';
import type { DelegationResult, DelegationStatus } from './agent/delegation/types';
import type { ModelFaultKind } from './errors';
import type { TokenUsage } from './llm/types';
import type { ReceiptSummary, RunSpendSummary } from './spend/receipt';
import type { Signal } from './signals/types';
import type { TaskStatus } from './tasks/schema';

/**
 * How a run ended for the person (one summary, in the CLI, a notification and the panel):
 * what is done, what needs them — a question to answer, work to review, a block — and what
 * failed, timed out or halted.
 */
export interface RunOutcome {
  done: string[];
  /** Open questions (NEEDS_HELP, a gated command, a block), the first one first. */
  questions: { taskId: string; question: string }[];
  /** Tasks waiting for review. */
  reviews: string[];
  failed: { taskId: string; status: TaskStatus; reason: string }[];
  /** Checked tasks whose landing the person's own files were in the way of in an unattended run: they land on the next run. */
  landing?: { taskId: string; files: string[]; reason: string }[];
}

/** Where a task stands in the merge queue (`waiting`: the user's uncommitted changes are in the way). */
export type MergeState = 'queued' | 'merging' | 'checking' | 'waiting' | 'merged' | 'conflict' | 'failed' | 'review';

/** What happened to a task's worktree. */
export type WorktreeState = 'ready' | 'kept' | 'removed';

/**
 * Where a parallel task's agent stands (issue 34): `model` it holds an agent slot (talking to the
 * model), `gates` its slot went to another task while its gates (proof) run, `waiting` its gates
 * sent it back and it waits for a free slot (before any new task gets one).
 */
export type AgentSlotState = 'model' | 'gates' | 'waiting';

/** Why an iteration ended the way it did. */
export type IterationOutcome =
  | 'complete' // the completion policy accepted COMPLETE
  | 'continue' // another iteration follows
  | 'blocked'
  | 'needs_help'
  | 'error' // the iteration failed (API or tool error); counted towards the error threshold
  | 'stopped'; // the user stopped the run mid-iteration

/**
 * Every event the core emits. UIs and the CLI consume these; they never reach into the loop.
 * The same objects are appended, one JSON per line, to `.ralph/runs/<runId>.ndjson`.
 */
export type RalphEventBody =
  | { type: 'run.started'; workspace: string; taskIds: string[] }
  | {
      type: 'run.finished';
      results: { taskId: string; status: TaskStatus }[];
      reason: string;
      spend?: RunSpendSummary;
      outcome?: RunOutcome;
    }
  | { type: 'task.started'; taskId: string; title: string; iteration: number; maxIterations: number; resumed: boolean }
  | { type: 'task.status'; taskId: string; from: TaskStatus; to: TaskStatus; reason?: string }
  /** `proof`: the task's fail-to-pass proof in one line, when it needed one. */
  | {
      type: 'task.finished';
      taskId: string;
      status: TaskStatus;
      iterations: number;
      reason: string;
      fault?: ModelFaultKind;
      receipt?: ReceiptSummary;
      proof?: string;
    }
  /** `model`: the built-in agent's model, or the CLI's label and model (`Claude Code: opus`); `agent`: who works (absent in older logs). */
  | { type: 'iteration.started'; taskId: string; iteration: number; maxIterations: number; model: string; agent?: AgentKind }
  | {
      type: 'iteration.finished';
      taskId: string;
      iteration: number;
      outcome: IterationOutcome;
      signal?: string;
      durationMs: number;
      commit?: string;
      usage: TokenUsage;
      error?: string;
    }
  // `agent` is set on the events of a sub-agent's conversation (scout, devo, caio); absent for the orchestrator.
  | { type: 'model.delta'; taskId: string; iteration: number; text: string; agent?: string }
  | {
      type: 'model.response';
      taskId: string;
      iteration: number;
      model: string;
      usage: TokenUsage;
      toolCalls: number;
      finishReason: string;
      agent?: string;
    }
  | { type: 'model.retry'; taskId?: string; attempt: number; maxRetries: number; delayMs: number; reason: string; fault?: ModelFaultKind }
  /**
   * A model call failed with a fault told apart (see ModelFaultKind) and what the loop does about it:
   * `halt` (auth, quota with no fallback left: the task ends halted), `compact-retry` (context length),
   * `feedback` (content filtered: told to the agent), `error` (the iteration ends with the error).
   */
  | {
      type: 'model.fault';
      taskId: string;
      iteration: number;
      model: string;
      fault: ModelFaultKind;
      action: 'halt' | 'compact-retry' | 'feedback' | 'error';
      message: string;
      agent?: string;
    }
  /** `llm.fallback`: a switch to a fallback, the return to the primary after its cool-down, or a probe that found it still failing. */
  | {
      type: 'model.fallback';
      kind: 'switch' | 'return' | 'probe-failed';
      from: string;
      to: string;
      fault?: ModelFaultKind;
      reason: string;
      cooldownSec?: number;
    }
  /**
   * The budget, the task timeout or Stop arrived mid-iteration: the agent had one bounded,
   * tool-limited turn for its progress notes before the commit. `wrote`: the files it wrote.
   */
  | {
      type: 'wind-down';
      taskId: string;
      iteration: number;
      cause: 'budget' | 'timeout' | 'stop';
      reason: string;
      wrote: string[];
      error?: string;
    }
  /** An agent CLI's session of one iteration (issue 46): its id (in the CLI's own history) and the model it said it used. */
  | { type: 'agent.session'; taskId: string; iteration: number; agent: string; sessionId: string; model?: string }
  | { type: 'tool.call'; taskId: string; iteration: number; callId: string; tool: string; args: string; agent?: string }
  | {
      type: 'tool.result';
      taskId: string;
      iteration: number;
      callId: string;
      tool: string;
      ok: boolean;
      summary: string;
      durationMs: number;
      agent?: string;
    }
  /** The orchestrator handed an objective to a sub-agent; `delegationId` pairs it with its result. */
  | {
      type: 'delegation.started';
      taskId: string;
      iteration: number;
      delegationId: string;
      target: string;
      objective: string;
      expectedOutcome?: string;
      model: string;
    }
  /** A sub-agent finished: the structured result and the verification envelope the orchestrator received. */
  | {
      type: 'delegation.result';
      taskId: string;
      iteration: number;
      delegationId: string;
      target: string;
      objective: string;
      model: string;
      status: DelegationStatus;
      result: DelegationResult;
      envelope: string;
      usage: TokenUsage;
      durationMs: number;
    }
  /** A conversation was summarized to stay under `llm.compactAt × llm.contextWindow`; the original request was pinned. */
  | { type: 'compaction'; taskId: string; iteration: number; scope: string; tokensBefore: number; tokensAfter: number }
  | { type: 'signal'; taskId: string; iteration: number; signal: Signal }
  | { type: 'git.commit'; taskId: string; iteration: number; sha: string; message: string; files: string[] }
  | { type: 'checkpoint'; taskId: string; iteration: number; file: string }
  /** `scope` affected: the command runs only the tests the task's changes reach (issue 34). */
  | { type: 'gate.started'; taskId?: string; iteration?: number; gate: string; kind: string; command: string; scope?: 'affected' }
  | {
      type: 'gate.finished';
      taskId?: string;
      iteration?: number;
      gate: string;
      kind: string;
      required: boolean;
      passed: boolean;
      summary: string;
      durationMs: number;
      tests?: { passed: number; failed: number; total: number; failing: string[] };
      severity?: string;
      /** Gate integrity against the task's base: how the gate was weakened, or the changes the task was allowed to make. */
      integrity?: { violations: string[]; allowed: string[] };
      /** Failing tests that already failed at the task's base (or on the merge target's tip): not held against the task. */
      preExisting?: string[];
      /** Every failing test that failed at the base too: held against the task or forgiven, and the evidence (`gates/verdictEvidence.ts`). */
      baseFailures?: { name: string; held: boolean; why: string }[];
      /** Tests that failed and then passed when the gate ran again (`gates[].rerunFailures`). */
      flaky?: string[];
      /** The gate was red at the base too, but its output names no failing tests: why nothing was forgiven. */
      baselineNote?: string;
      /** A part of the suite (`affected`: its test files counted, `of` the suite's tests at the base), or the whole and why, where a part was possible. */
      scope?: { kind: 'affected'; files: number; of?: number } | { kind: 'full'; why: string };
    }
  /** The fail-to-pass proof of a COMPLETE: the task's tests run against its base code (`tests`: those that fail there, with the first line of the failure). */
  | {
      type: 'proof';
      taskId: string;
      iteration: number;
      status: 'proven' | 'not-proven';
      reason: string;
      files: string[];
      tests: { name: string; baseFailure?: string }[];
      passingOnBase: string[];
    }
  | {
      type: 'integrity.baseline';
      taskId: string;
      gates: { gate: string; tests?: { total: number; skipped: number; named: number }; definition: string[] }[];
    }
  | { type: 'report.written'; taskId: string; iteration?: number; file: string; final: boolean }
  /** `from`/`to`: the steps' labels (`gpt-4.1-mini` → `Claude Code: opus`); `toAgent`/`toModel`: the agent and model of the next iterations. */
  | {
      type: 'escalation';
      taskId: string;
      iteration: number;
      from: string;
      to: string;
      reason: string;
      toAgent?: AgentKind;
      toModel?: string;
    }
  | { type: 'council.started'; taskId: string; iteration: number; models: string[]; reason: string }
  | { type: 'council.finished'; taskId: string; iteration: number; plan: string }
  | { type: 'budget'; taskId?: string; costUsd: number; tokens: number; taskCostUsd: number; taskTokens: number }
  | { type: 'run.paused'; taskId?: string }
  | { type: 'run.resumed'; taskId?: string }
  | { type: 'warning'; taskId?: string; code: string; message: string; iteration?: number; maxIterations?: number }
  | { type: 'warning.answered'; taskId?: string; code: string; action: string }
  | { type: 'error'; taskId?: string; message: string }
  /**
   * The merge queue moved a task: queued → merging → checking → merged | conflict | failed (waiting: the user's tree is in the way).
   * `target` is the branch merged into; `gates` the required gates of the merged check (once it ran); `attempts` the times the task entered the queue.
   */
  | {
      type: 'merge';
      taskId: string;
      state: MergeState;
      detail?: string;
      files?: string[];
      commit?: string;
      title?: string;
      target?: string;
      attempts?: number;
      gates?: { name: string; passed: boolean; summary: string }[];
      /** The task's fail-to-pass proof, one line, when it needed one. */
      proof?: string;
      /**
       * In the merge chain (merging, checking): its place (1 = the head, next to land), the tasks
       * ahead of it its prefix is built on, whether its prefix passed, the task whose check covers
       * it (`merge.batchSize`), and whether it is held aside for review (the ones behind skip it).
       */
      chain?: { place: number; ahead: string[]; passed?: boolean; coveredBy?: string; aside?: boolean };
      /** Checked ahead of its own gates (`merge.checkAhead`): its agent signalled COMPLETE, its gates still run; decided once they pass. */
      provisional?: boolean;
    }
  /** A planning run (`ralph plan`, Plan Tasks from Document) began: the model reads `document` (one `section` of it, when given). */
  | { type: 'plan.started'; document: string; section?: string; model: string }
  /**
   * The planning run ended: tasks proposed for a person's review (`proposed`), a proposal that
   * cannot be accepted as it is (`refused`: a dependency cycle…), or no usable plan (`failed`).
   * Nothing is in the task store until the person accepts.
   */
  | {
      type: 'plan.finished';
      document: string;
      outcome: 'proposed' | 'refused' | 'failed';
      tasks: number;
      reason: string;
      report?: string;
      spend?: RunSpendSummary;
    }
  /** A parallel task's worktree: ready for its agent (`created` false: picked up again), kept after the agent ended, or removed. */
  | { type: 'worktree'; taskId: string; state: WorktreeState; path: string; branch: string; created?: boolean }
  /** A parallel task's agent slot moved: given away as its gates start, waited for, taken back (see AgentSlotState). */
  | { type: 'agent.slot'; taskId: string; state: AgentSlotState };

export type RalphEventType = RalphEventBody['type'];

/** An event as delivered: its body plus run id, sequence number and ISO time. */
export type RalphEvent = RalphEventBody & { runId: string; seq: number; time: string };

export type EventOf<T extends RalphEventType> = Extract<RalphEvent, { type: T }>;

export type EventListener = (event: RalphEvent) => void;

/** A synchronous fan-out of events. A listener that throws is isolated from the others. */
export class EventBus {
  private readonly listeners = new Set<EventListener>();

  subscribe(listener: EventListener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  publish(event: RalphEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // a broken UI listener must not break the loop
      }
    }
  }
}

/** Stamps bodies with run id, sequence and time and hands them to the bus. */
export class EventEmitter {
  private seq = 0;

  constructor(
    readonly runId: string,
    private readonly bus: EventBus,
    private readonly now: () => number = Date.now,
  ) {}

  emit(body: RalphEventBody): RalphEvent {
    const event = { ...body, runId: this.runId, seq: ++this.seq, time: new Date(this.now()).toISOString() } as RalphEvent;
    this.bus.publish(event);
    return event;
  }
}

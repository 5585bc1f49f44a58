import { ConfigError, errorMessage } from '../../errors';
import { sleepOrStop } from '../../util/untilStopped';
import { WarmWorktrees } from '../../git/warmWorktrees';
import { remoteActive } from '../../tasks/remote';
import type { Task, TaskStatus } from '../../tasks/schema';
import {
  answerOrStop,
  askAfter,
  holdForReview,
  type PersonSideDeps,
  keepOnItsBranch,
  landLater,
  queueApproved,
  releaseHold,
  stopWaitingForFiles,
  takeUpUnfinished,
} from './autopilotPerson';
import { afterAgentEnd, endAfterMerge, queueCompleted, removeMergedWorktree, sendBack, setTaskStatus } from '../merge/mergeEnds';
import type { MergeOutcome } from '../merge/mergeQueue';
import {
  agentEnded,
  type AgentEnd,
  EMPTY_SCHEDULE,
  fillSlots,
  mergeEnded,
  readyTasks,
  reopen,
  scheduleFinished,
  type SchedulerState,
} from './scheduler';
import { PersonWaits } from '../person/personWaits';
import { pruneLeftovers } from './pruneLeftovers';
import type { TaskLoop } from '../task/taskLoop';
import { RunHalt, runHaltOf } from '../runHalt';
import type { AgentSlot, CheckAhead, TaskRunResult } from '../task/types';
import { wakeUp } from '../merge/mergeChecks';
import { queueCheckAhead } from '../merge/checkAhead';
import { AgentSlots } from './agentSlots';
import { gateProcessLimit } from './gateBound';

export interface AutopilotDeps extends PersonSideDeps {
  /**
   * A task loop whose tools, commands, gates, commits and notes act in `workRoot` (`checkAhead`: its
   * COMPLETE told to the queue as its gates start; `slot`: its agent slot, given away while its gates run).
   */
  loopFor(workRoot: string, checkAhead?: CheckAhead, slot?: AgentSlot): Promise<TaskLoop>;
  /** Only this task (`ralph run <id>`); otherwise every ready task. */
  only?: string;
  /** How long a merge that waits for the user's tree waits before it looks again. */
  waitRetryMs?: number;
}

type Finished =
  | { kind: 'agent'; taskId: string; result: TaskRunResult }
  | { kind: 'merge'; outcome: MergeOutcome | undefined }
  | { kind: 'hold'; answer: 'continue' | 'stop' }
  | { kind: 'tick' };
const tick = (): Finished => ({ kind: 'tick' });

/**
 * The parallel autopilot (seed 004, "Parallel Agent Coordination"): up to `loop.maxParallel`
 * agents talking to the model, each task in its own worktree made from the target's current tip
 * (a task's slot goes to the next task while its gates run: `AgentSlots`); a task whose agent
 * signalled COMPLETE (required gates green in its worktree) goes to the merge queue, and is
 * `done` only once the queue has landed it on the target after re-checking the merged result.
 * A conflict or a red merged check sends the task back to its agent on the new tip.
 */
export class Autopilot {
  private schedule: SchedulerState = EMPTY_SCHEDULE;
  private readonly agents = new Map<string, Promise<Finished>>();
  private merging: Promise<Finished> | undefined;
  /** Semi-auto: the person's answer the autopilot waits for before it starts another agent. */
  private holding: Promise<Finished> | undefined;
  /** The person said stop at a hold: agents at work finish, none starts. */
  private noMoreStarts = false;
  private retryMergeAt = 0;
  /** Set when an agent halted on a bad key or an exhausted quota: no further agent starts. */
  private providerHalt: string | undefined;
  /** What each waiting merge last said, so a wait is announced once, not at every look. */
  private readonly waitingSaid = new Map<string, string>();
  private readonly results: TaskRunResult[] = [];
  /** Ends of landed tasks being written (see `loop`). */
  private readonly ending = new Set<Promise<void>>();
  private endFailed: { error: unknown } | undefined;
  /** Worktree removals of merged tasks, off the queue's critical path; awaited before the run ends. */
  private readonly cleanups: Promise<void>[] = [];
  /** The next tasks' worktrees, made while the running agents wait for their models. */
  private readonly warm: WarmWorktrees;
  /** Tasks this run left waiting for the person, merges waiting on their files, and their actions. */
  private readonly person: PersonWaits;
  /** Waiting merges the person asked to keep on their branch (held for review) instead. */
  private readonly keep = new Set<string>();
  private readonly halted = new RunHalt();
  /** Resolved when a COMPLETE was queued ahead of its gates (the queue's next step starts now) or a slot was given away. */
  private wake = wakeUp();
  /** `merge.checkAhead`: a COMPLETE is queued (provisional) as its gates start, confirmed or taken back at its loop's verdict. */
  private readonly checkAhead: CheckAhead;
  /** The agent slots: given away while a task's gates run, taken back before its next conversation. */
  private readonly slots: AgentSlots;

  constructor(private readonly d: AutopilotDeps) {
    this.warm = new WarmWorktrees(d.worktrees, d.target);
    this.person = new PersonWaits({ store: d.store, waitForUserMs: d.config.merge.waitForUserMinutes * 60_000 });
    this.checkAhead = queueCheckAhead(d.queue, d.config, () => {
      this.retryMergeAt = 0;
      this.wake.resolve();
    });
    const schedule = { get: () => this.schedule, set: (state: SchedulerState) => (this.schedule = state) };
    this.slots = new AgentSlots({ schedule, maxParallel: d.config.loop.maxParallel, emit: d.emit, wake: () => this.wake.resolve() });
  }

  /** Retry Now: merges that wait on the person's files are tried again at once. */
  retryWaitingMerges(): void {
    this.retryMergeAt = 0;
    this.person.poke();
  }

  /** Keep on Its Branch: a merge that waits on the person's files stops waiting; its checked result is held for them. */
  keepOnBranch(taskId: string): void {
    this.keep.add(taskId);
    this.person.poke();
  }

  /** Why the run halted by itself (a git lock held where every task needs it); undefined otherwise. */
  get haltReason(): string | undefined {
    return this.halted.reason;
  }

  async run(userStop: AbortSignal): Promise<TaskRunResult[]> {
    const stop = AbortSignal.any([userStop, this.halted.signal]);
    await this.recover();
    try {
      await this.loop(stop);
    } catch (error) {
      // bad input (a corrupt checkpoint) ends the run as it does with one agent: the other agents stop first
      this.halted.halt(errorMessage(error), this.d.emit);
      throw error;
    } finally {
      this.person.dispose();
      const { d } = this;
      // never leave with an agent or a merge still at work (the run lock is released after this)
      await Promise.allSettled([
        ...this.agents.values(),
        ...this.ending,
        ...(this.merging ? [this.merging] : []),
        ...(this.holding ? [this.holding] : []),
      ]);
      await Promise.all(this.cleanups);
      await this.warm.dispose(); // worktrees made ahead for tasks that did not start in this run
      await d.queue.idle(); // a stopped check's processes end before its merge worktree goes
      await this.d.worktrees.removeMergeWorktree().catch(() => undefined); // made again by the next merge
    }
    return this.results;
  }

  private async loop(stop: AbortSignal): Promise<void> {
    const { d } = this;
    for (;;) {
      // an end written beside the loop that failed fails the run, as one awaited in turn did
      if (this.endFailed) throw this.endFailed.error;
      this.wake = wakeUp();
      await this.personActions();
      // the tasks their gates sent back first: they go on whatever holds new starts back
      this.slots.resume();
      if (!stop.aborted && !this.providerHalt && !this.holding && !this.noMoreStarts) this.startAgents(await this.candidates(), stop);
      this.nextMerge(stop);
      // the slots were just filled: no agent and nothing to merge means nothing is left to do
      if (this.agents.size === 0 && !this.merging && !this.holding && this.ending.size === 0 && (stop.aborted || !d.queue.pending)) {
        if (!stop.aborted && !this.providerHalt && !this.noMoreStarts && !scheduleFinished(this.schedule, await this.candidates())) {
          d.emit({
            type: 'warning',
            code: 'autopilot-stalled',
            message: `tasks ${this.schedule.merging.join(', ')} wait for a merge that is not queued; the next run queues them again`,
          });
        }
        break;
      }
      const waits: Promise<Finished>[] = [...this.agents.values(), ...[...this.ending].map((e) => e.then(tick))];
      if (this.holding) waits.push(this.holding);
      if (this.merging) waits.push(this.merging);
      else if (d.queue.pending && !stop.aborted) waits.push(sleepOrStop(Math.max(0, this.retryMergeAt - Date.now()), stop).then(tick));
      waits.push(this.wake.promise.then(tick));
      // the person may answer, approve or retry while the others work: look for it meanwhile
      if (this.person.waiting && !stop.aborted) waits.push(this.person.nextLook(stop).then(tick));
      const finished = await Promise.race(waits);
      if (finished.kind === 'agent') await this.agentFinished(finished.taskId, finished.result, stop);
      else if (finished.kind === 'hold') {
        this.holding = undefined;
        if (finished.answer === 'stop') this.noMoreStarts = true;
      } else if (finished.kind === 'merge') {
        this.merging = undefined;
        const ending = this.mergeFinished(finished.outcome);
        if (finished.outcome?.state !== 'merged') await ending;
        else {
          // a landed task's end (its status, report, event) is written while the queue goes on with the next,
          // and beside the ends of the tasks that landed with it
          this.nextMerge(stop);
          this.ending.add(ending);
          const ended = () => this.ending.delete(ending);
          ending.then(ended, (error: unknown) => (ended(), (this.endFailed ??= { error })));
        }
      }
    }
  }

  /** The queue's next step, unless one is under way, a merge waits for the person's files, or the run stops (tasks already landed are still taken). */
  private nextMerge(stop: AbortSignal): void {
    if (this.merging || !this.d.queue.pending || (stop.aborted ? !this.d.queue.landedToReport : Date.now() < this.retryMergeAt)) return;
    this.merging = this.d.queue.processNext(stop).then(
      (outcome) => ({ kind: 'merge', outcome }) as Finished,
      (error) => this.mergeThrew(error),
    );
  }

  /**
   * Before any agent starts: prune what a crash left (run lock held, so no Ralph git process
   * runs), and put tasks back in the queue whose agent had finished but whose merge had not.
   */
  private async recover(): Promise<void> {
    const { d } = this;
    const tasks = await d.store.list();
    await pruneLeftovers(d, this.warm, tasks);
    this.schedule = await takeUpUnfinished(d, this.person, tasks, this.schedule, (id) => this.wanted(id));
  }

  /**
   * What the person did meanwhile: answered, unblocked, raised a limit or requested changes
   * (the task is ready again: it starts in this run), approved a review (the queue lands it),
   * or asked to keep a waiting merge on its branch.
   */
  private async personActions(): Promise<void> {
    for (const taskId of [...this.keep]) {
      this.keep.delete(taskId);
      const held = keepOnItsBranch(this.d, taskId);
      if (held) await this.holdForPerson(held);
    }
    const acted = await this.person.acted();
    if (acted.reopened.length === 0 && acted.approved.length === 0) return;
    this.schedule = reopen(this.schedule, acted.reopened, acted.approved);
    const refused = await queueApproved(this.d, acted.approved);
    if (refused.length < acted.approved.length) this.retryMergeAt = 0;
    for (const taskId of refused) this.schedule = mergeEnded(this.schedule, taskId, 'gave-up');
  }

  /** The queue holds a checked result for the person: the task waits as `review` until they approve it. */
  private async holdForPerson(outcome: MergeOutcome): Promise<void> {
    this.results.push(await holdForReview(this.d, outcome));
    this.schedule = mergeEnded(this.schedule, outcome.taskId, 'review');
    this.person.ended(outcome.taskId, 'review');
  }

  private async candidates(): Promise<Task[]> {
    // tasks the forge runs as CI jobs are not this machine's to start
    const tasks = (await this.d.store.list()).filter((t) => this.wanted(t.id) && !remoteActive(t.remote));
    // `ralph run <id>` resumes a halted task too (the runner checked it is startable); the autopilot alone never does
    return this.d.only === undefined ? tasks : tasks.map((t) => (t.status === 'halted' ? { ...t, status: 'in_progress' as const } : t));
  }

  private wanted(taskId: string): boolean {
    return this.d.only === undefined || this.d.only === taskId;
  }

  private startAgents(tasks: Task[], stop: AbortSignal): void {
    const { maxParallel, maxConcurrentGates } = this.d.config.loop;
    // beyond a slot each and a gate process each, a started task's gates would only wait in line
    const filled = fillSlots(this.schedule, tasks, maxParallel, maxParallel + gateProcessLimit(maxConcurrentGates));
    this.schedule = filled.state;
    this.slots.granted(filled.resume);
    for (const task of filled.start) {
      const run = this.runAgent(task, stop).then((result) => ({ kind: 'agent', taskId: task.id, result }) as Finished);
      this.agents.set(task.id, run);
    }
    // every slot taken: the tasks next in line (new ones, which have no worktree yet) get theirs made meanwhile
    const next = readyTasks(tasks, this.schedule).filter((t) => t.status === 'todo' && !this.schedule.returning.includes(t.id));
    this.warm.prepare(next.slice(0, maxParallel).map((t) => t.id));
  }

  private async runAgent(task: Task, stop: AbortSignal): Promise<TaskRunResult> {
    const { d } = this;
    try {
      const worktree = await this.warm.take(task.id);
      d.emit({
        type: 'worktree',
        taskId: task.id,
        state: 'ready',
        path: worktree.path,
        branch: worktree.branch,
        created: worktree.created,
      });
      const current = await d.store.get(task.id);
      return await (await d.loopFor(worktree.path, this.checkAhead, this.slots.of(task.id))).run(current, stop);
    } catch (error) {
      // a corrupt checkpoint is the user's to repair: the task stays as it is and the run ends (exit 2), never `failed`
      if (error instanceof ConfigError) throw error;
      const reason = `could not run in its worktree: ${errorMessage(error)}`;
      d.emit({ type: 'error', taskId: task.id, message: reason });
      await setTaskStatus(this.d, task.id, 'failed', reason);
      return { taskId: task.id, status: 'failed', reason, iterations: task.iterations };
    }
  }

  private async agentFinished(taskId: string, result: TaskRunResult, stop: AbortSignal): Promise<void> {
    const { d } = this;
    this.agents.delete(taskId);
    // a check made ahead of the task's gates is taken back at once: the tasks behind it are built without it
    if (result.status !== 'done') d.queue.withdraw(taskId, `its agent ended ${result.status}: ${result.reason}`);
    if (result.status === 'done') {
      // the loop kept the task in_progress: it is done once merged
      this.schedule = agentEnded(this.schedule, taskId, 'complete');
      const refused = await queueCompleted(d, taskId);
      if (!refused) this.retryMergeAt = 0;
      else {
        this.results.push(refused);
        this.schedule = mergeEnded(this.schedule, taskId, 'gave-up');
      }
      return;
    }
    this.schedule = agentEnded(this.schedule, taskId, result.status as AgentEnd);
    this.results.push(result);
    this.person.ended(taskId, result.status);
    if (result.runHalt) this.halted.halt(result.runHalt, d.emit);
    if ((result.fault === 'auth' || result.fault === 'quota') && !this.providerHalt) {
      // a bad key or an exhausted quota would halt every task started after it the same way
      this.providerHalt = result.reason;
      d.emit({ type: 'warning', taskId, code: 'provider-halt', message: `no new agents start in this run: ${result.reason}` });
    }
    await afterAgentEnd(d, taskId, result.status);
    await this.maybeHold(taskId, result, stop);
  }

  /** A merge that cannot go on for a reason that stops every merge (a held git lock) halts the run; anything else ends it as before. */
  private mergeThrew(error: unknown): Finished {
    const halt = runHaltOf(error);
    if (halt === undefined) throw error;
    this.halted.halt(halt, this.d.emit);
    return { kind: 'merge', outcome: undefined };
  }

  /** Semi-auto: after a blocked / needs_help / timeout end, wait for the person while another task could start. */
  private async maybeHold(taskId: string, result: TaskRunResult, stop: AbortSignal): Promise<void> {
    const ask = askAfter(this.d, result);
    if (!ask || this.holding || this.noMoreStarts || stop.aborted) return;
    const waiting = fillSlots(this.schedule, await this.candidates(), Number.MAX_SAFE_INTEGER).start;
    if (waiting.length === 0) return;
    this.holding = answerOrStop(ask(taskId, result.status, result.reason), stop).then((answer) => ({ kind: 'hold', answer }) as Finished);
  }

  private async mergeFinished(outcome: MergeOutcome | undefined): Promise<void> {
    const { d } = this;
    if (!outcome) return; // re-queued (the target kept moving, or a stop)
    const { taskId } = outcome;
    if (outcome.state === 'waiting') {
      // nobody to move the person's files (unattended): its landing ends now, checked, and the next run lands it
      const later = d.unattended ? await landLater(d, outcome) : undefined;
      if (later) {
        this.results.push(later);
        this.schedule = mergeEnded(this.schedule, taskId, 'gave-up');
        return;
      }
      if (this.person.mergeWaits(taskId)) {
        // never forever: past merge.waitForUserMinutes the checked result waits for the person instead
        const held = stopWaitingForFiles(d, outcome);
        this.waitingSaid.delete(taskId);
        if (held) return this.holdForPerson(held);
      }
      this.retryMergeAt = Date.now() + Math.min(d.waitRetryMs ?? 2000, this.person.msUntilGiveUp(taskId) ?? Number.POSITIVE_INFINITY);
      if (this.waitingSaid.get(taskId) !== outcome.detail)
        d.emit({ type: 'warning', taskId, code: 'merge-waiting', message: `merge of ${taskId} waits: ${outcome.detail ?? ''}` });
      this.waitingSaid.set(taskId, outcome.detail ?? '');
      return;
    }
    this.waitingSaid.delete(taskId);
    this.person.mergeGoesOn(taskId);
    if (outcome.state === 'review') return this.holdForPerson(outcome);
    if (outcome.state === 'merged') {
      this.warm.follow(); // the next tasks' worktrees go to the new tip before their tasks start
      // its worktree goes meanwhile: the final report reads the landed commit, not the worktree
      this.cleanups.push(removeMergedWorktree(d, taskId));
      // its place in the results is taken now: ends written side by side keep the order of landing
      const place = this.results.push({ taskId, status: 'done', reason: 'merged', iterations: 0 }) - 1;
      this.results[place] = await endAfterMerge(d, outcome, 'done', outcome.detail ?? 'merged');
      await releaseHold(d, taskId);
      this.schedule = mergeEnded(this.schedule, taskId, 'merged');
      return;
    }
    const returnable = outcome.state === 'conflict' || outcome.feedback !== undefined;
    if (!returnable || outcome.attempts > d.config.merge.maxReturns) {
      const status: TaskStatus = returnable ? 'needs_help' : 'failed';
      const reason = returnable
        ? `not merged after ${outcome.attempts} attempts: ${outcome.detail ?? ''}`
        : (outcome.detail ?? 'merge failed');
      this.results.push(await endAfterMerge(d, outcome, status, reason));
      this.schedule = mergeEnded(this.schedule, taskId, 'gave-up');
      return;
    }
    const ended = await sendBack(d, outcome);
    if (ended) this.results.push(ended);
    this.schedule = mergeEnded(this.schedule, taskId, ended ? 'gave-up' : 'returned');
  }
}

import * as path from 'node:path';
import { errorMessage } from '../../errors';
import type { GateRunner } from '../../gates/types';
import type { MergeWorkspace, PrepareResult } from '../../git/integrate';
import { mergeTreeSupported } from '../../git/mergeTree';
import { GitLockHeldError } from '../../git/lockRule';
import { awaitsConfirmation, chainHead, chainOf, entryOf, type MergeEntry } from './mergeChain';
import {
  type CheckedResult,
  dedupe,
  ExclusiveGates,
  type Gates,
  type Job,
  type JobResult,
  MergeWorkspacePool,
  wakeUp,
} from './mergeChecks';
import { checkPrefix, TipVerdicts } from './mergedCheck';
import { briefly, type GreenHead, greenHeadsFrom, joiningGroups, landTogether, lookAgainAtTips } from './greenHeads';
import { MergeQueueBase, type MergeQueueDeps, type MergeOutcome } from './mergeQueueBase';

export * from './mergeChain';
export type { CheckedResult, MergeQueueDeps, MergeOutcome };

/** Times the chain is rebuilt in one go when the target keeps moving under it. */
const MAX_MOVES = 3;

/**
 * The queue's executor on real git, a speculative chain: every queued task joins the chain
 * with its prefix (target + the tasks ahead + it) built as objects (`merge-tree`), and up to
 * `concurrency` prefixes are checked at once, each in its own merge worktree. The head lands
 * once its own prefix is green (compare-and-swap on the target's ref); a head that leaves
 * unlanded (conflict, red, review, waiting) takes the prefixes built on it back to the queue,
 * to be built again without it. Nothing reaches the target before its tree passed the check.
 */
export class MergeQueue extends MergeQueueBase {
  private readonly pool: MergeWorkspacePool;
  private readonly gates: GateRunner;
  private readonly tips = new TipVerdicts();
  /** Checks under way, the stale (stopped) ones until their processes ended. */
  private readonly running = new Set<Promise<JobResult>>();
  /** The last filling of the chain (settled: none under way). */
  private filling: Promise<unknown> = Promise.resolve();

  constructor(deps: MergeQueueDeps) {
    super(deps);
    this.pool = new MergeWorkspacePool(deps.worktrees, this.concurrency, ({ file, ageMs }) =>
      deps.emit?.({
        type: 'warning',
        code: 'git-lock-cleared',
        message: `removed a stale ${path.relative(deps.worktrees.root, file)} (${Math.round(ageMs / 1000)} s old, no git process works in this repository); the merge goes on`,
      }),
    );
    this.gates = new ExclusiveGates(deps.gates);
  }

  private get concurrency(): number {
    return Math.max(1, this.deps.concurrency ?? 1);
  }

  private get batchSize(): number {
    return Math.max(1, this.deps.batchSize ?? 1);
  }

  /**
   * Keeps the chain full and decides its head: resolves with the head's outcome (landed, sent
   * back, held), undefined when nothing is pending, the chain was put back (a stop, a target
   * that kept moving). Checks behind the head go on between calls.
   */
  async processNext(signal?: AbortSignal): Promise<MergeOutcome | undefined> {
    const landed = this.landedAhead.shift();
    if (landed) return landed;
    let onAbort: (() => void) | undefined;
    const aborted = signal
      ? new Promise<'wake'>((resolve) => signal.addEventListener('abort', (onAbort = () => resolve('wake')), { once: true }))
      : undefined;
    try {
      return await this.chainStep(signal, aborted);
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  private async chainStep(signal: AbortSignal | undefined, aborted: Promise<'wake'> | undefined): Promise<MergeOutcome | undefined> {
    for (let moves = 0; ;) {
      if (signal?.aborted) return this.putBack('stopped during the merge; queued again');
      this.wake = wakeUp();
      // a head whose check is done lands at once: the tasks behind it are built meanwhile, on its prefix
      const ready = chainHead(this.state);
      if (!ready || ready.provisional || !this.jobs.get(ready.taskId)?.settled) await this.fill(signal);
      else void this.fill(signal);
      const head = chainHead(this.state);
      const job = head && this.jobs.get(head.taskId);
      if (!head || !job) return undefined;
      if (awaitsConfirmation(this.state, head)) {
        // checked ahead of its own gates: decided once its loop confirms it or takes it back
        await Promise.race([this.wake.promise, ...(aborted ? [aborted] : [])]);
        continue;
      }
      if (job.ahead && (await this.branchMoved(head, job.ahead.tip))) continue;
      const done = await Promise.race([job.done, this.wake.promise, ...(aborted ? [aborted] : [])]);
      if (done === 'wake') continue;
      const outcome = await this.decide(head, done, signal);
      if (outcome === 'again') continue;
      if (outcome === 'moved') {
        if (++moves >= MAX_MOVES) return undefined;
        continue;
      }
      return outcome;
    }
  }

  /** The commit of the task's branch now (a file read). */
  private taskTip(taskId: string): Promise<string | undefined> {
    return this.pool.main.refs.branchTip(this.deps.worktrees.branchFor(taskId));
  }

  /** A head checked ahead of its own gates, now confirmed: a branch that moved since its check began is built again, never landed stale. */
  private async branchMoved(head: MergeEntry, tip: string): Promise<boolean> {
    const job = this.jobs.get(head.taskId)!;
    const now = await this.taskTip(head.taskId).catch(() => undefined);
    if (this.jobs.get(head.taskId) !== job) return true; // it left meanwhile: look again
    job.ahead = undefined;
    if (now === tip) return false;
    this.apply({
      type: 'requeue',
      taskId: head.taskId,
      detail: `its branch moved after its check began (${tip.slice(0, 10)}); built again`,
    });
    return true;
  }

  /** Tasks join the chain (see `fillNow`), one filling after another: one may go on while the head lands. */
  private fill(signal: AbortSignal | undefined): Promise<void> {
    const run = this.filling.then(() => this.fillNow(signal));
    this.filling = run.catch(() => undefined);
    return run;
  }

  /** Tasks join the chain while there is room: `concurrency` checks (of `batchSize` tasks each), besides prefixes already green. */
  private async fillNow(signal: AbortSignal | undefined): Promise<void> {
    const tried = new Set<string>();
    // room is looked at again after each round: a prefix that turned green meanwhile (no gate to run) no longer takes a check's place
    for (
      let groups = joiningGroups(this.state, this.concurrency, this.batchSize);
      groups.flat().some((e) => !tried.has(e.taskId));
      groups = joiningGroups(this.state, this.concurrency, this.batchSize)
    ) {
      for (const group of groups) {
        const checker = group.at(-1)!.taskId;
        for (const e of group) {
          if (signal?.aborted) return; // stopped: the chain is put back, nothing new joins it
          tried.add(e.taskId);
          await this.build(
            e,
            e.taskId === checker ? group.slice(0, -1).map((m) => m.taskId) : undefined,
            e.taskId === checker ? undefined : checker,
            signal,
          );
        }
      }
    }
  }

  /** Builds one task's prefix on the chain's current end and starts its check (not awaited). */
  private async build(
    entry: MergeEntry,
    covers: string[] | undefined,
    coveredBy: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { deps } = this;
    const aside = (await deps.holdForReview?.(entry.taskId).catch(() => false)) ?? false;
    if (signal?.aborted || entryOf(this.state, entry.taskId)?.state !== entry.state) return; // stopped or cancelled meanwhile
    const ahead = chainOf(this.state).filter((e) => !e.aside && this.jobs.get(e.taskId)?.result !== undefined);
    this.apply({ type: 'begin', taskId: entry.taskId, ahead: ahead.map((e) => e.taskId), aside, coveredBy });
    const pos = entryOf(this.state, entry.taskId)!.pos!;
    const abort = new AbortController();
    const job: Job = { pos, abort, done: Promise.resolve({ kind: 'empty' }) };
    this.jobs.set(entry.taskId, job);
    const run = signal ? AbortSignal.any([signal, abort.signal]) : abort.signal;
    let base: string | undefined;
    let prepared: PrepareResult;
    try {
      base = ahead.length > 0 ? this.jobs.get(ahead.at(-1)!.taskId)!.result! : await this.pool.main.refs.branchTip(deps.target);
      const checked = this.checked.get(entry.taskId);
      if (checked && checked.base === base) {
        // checked already on exactly this base (approved, or it waited for the person's files): lands as it is
        this.checked.delete(entry.taskId);
        job.result = checked.result;
        this.apply({ type: 'prepared', taskId: entry.taskId });
        this.apply({ type: 'green', taskId: entry.taskId, gates: checked.gates });
        job.value = {
          kind: 'checked',
          base,
          result: checked.result,
          gates: checked.gates,
          passed: true,
          feedback: [],
          detail: 'checked before',
        };
        job.done = Promise.resolve(job.value);
        return;
      }
      const notes = (await deps.notes?.(entry.taskId).catch(() => [])) ?? [];
      // checked ahead of its own gates: the commit merged is kept, to be looked at again once its loop confirms
      const tip = entryOf(this.state, entry.taskId)?.provisional ? await this.taskTip(entry.taskId) : undefined;
      if (tip) job.ahead = { tip };
      const task = { id: entry.taskId, title: entry.title, notes, fresh: this.fresh.has(entry.taskId), tip };
      const prepare = (ws: MergeWorkspace) => ws.prepare(task, deps.target, deps.strategy, base);
      // as objects no worktree is touched; git without merge-tree merges in a worktree no check is using
      prepared = (await mergeTreeSupported(deps.worktrees.root)) ? await prepare(this.pool.main) : await this.pool.use(prepare);
    } catch (error) {
      job.done = Promise.resolve({ kind: 'error', error });
      return;
    }
    if (this.jobs.get(entry.taskId) !== job) return; // cancelled meanwhile
    if (prepared.kind !== 'ready') {
      job.done = Promise.resolve(
        prepared.kind === 'already-merged'
          ? { kind: 'already', commit: prepared.commit }
          : prepared.kind === 'empty'
            ? { kind: 'empty' }
            : { kind: 'conflict', files: prepared.files, hunks: prepared.hunks },
      );
      return;
    }
    job.result = prepared.result;
    this.apply({ type: 'prepared', taskId: entry.taskId });
    const { result } = prepared;
    job.done = coveredBy
      ? Promise.resolve({ kind: 'covered', base: prepared.base, result })
      : this.check(entry.taskId, covers ?? [], prepared.base, result, run);
    this.running.add(job.done);
    void job.done
      .then((value) => (job.value = value))
      .finally(() => {
        job.settled = true;
        this.running.delete(job.done);
      });
  }

  /** Resolves once no check runs any more (a stopped one included): then the merge worktrees may go. */
  async idle(): Promise<void> {
    await this.filling;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    await this.deps.saved?.();
  }

  /** The merged check of one prefix, in a merge worktree of its own, judged against the prefix before it. */
  private async check(taskId: string, covers: string[], base: string, result: string, signal: AbortSignal): Promise<JobResult> {
    const { deps } = this;
    try {
      const own = await Promise.all([taskId, ...covers].map(async (id) => (await deps.taskGates?.(id)) ?? []));
      const required = dedupe([...deps.gateConfigs.filter((g) => g.required), ...own.flat()]);
      // judged against the prefix before it: a failure already red there does not hold the merge back
      const { gates, failing } = await checkPrefix({
        pool: this.pool,
        gates: required,
        runner: this.gates,
        target: deps.target,
        base,
        result,
        taskId,
        tips: this.tips,
        verdictTask: await this.verdictTaskOf([taskId, ...covers]),
        signal,
        emit: deps.emit,
      });
      const passed = failing.length === 0;
      const feedback = failing.flatMap((o) => o.fixItems.filter((f) => f.level === 'error').map((f) => `${o.name}: ${f.text}`));
      const detail = `required gates fail on the merged result: ${failing.map((o) => `${o.name} (${o.summary})`).join('; ')}`;
      const entry = entryOf(this.state, taskId);
      // green shows at once (the views); red is decided only once it is the head (the prefixes ahead may be red)
      if (passed && entry?.state === 'checking' && this.jobs.get(taskId)?.result === result)
        this.apply({ type: 'green', taskId, gates, covers });
      return { kind: 'checked', base, result, gates, passed, feedback, detail };
    } catch (error) {
      return { kind: 'error', error };
    }
  }

  /** The head's job is done: the head lands, leaves, or the chain is put back. */
  private async decide(
    head: MergeEntry,
    done: JobResult,
    signal: AbortSignal | undefined,
  ): Promise<MergeOutcome | 'again' | 'moved' | undefined> {
    const { taskId } = head;
    const { target } = this.deps;
    switch (done.kind) {
      case 'error':
        if (signal?.aborted) return this.putBack('stopped during the merge; queued again');
        if (done.error instanceof GitLockHeldError) {
          // a lock nobody released is not a verdict on the task either: queued again, and the run halts
          this.putBack(`not merged: ${done.error.message}`);
          throw done.error;
        }
        this.apply({ type: 'error', taskId, detail: `merge failed: ${errorMessage(done.error)}` });
        return this.current(taskId);
      case 'already':
        this.apply({ type: 'landed', taskId, commit: done.commit, detail: `already on ${target} (${done.commit.slice(0, 10)})` });
        return this.current(taskId);
      case 'empty':
        this.apply({ type: 'landed', taskId, detail: `nothing to merge: ${target} already has every change of the task` });
        return this.current(taskId);
      case 'conflict':
        this.apply({ type: 'conflict', taskId, files: done.files, hunks: done.hunks });
        return this.current(taskId);
      case 'covered': {
        const checker = head.coveredBy ? this.jobs.get(head.coveredBy) : undefined;
        const verdict = checker ? await checker.done : undefined;
        if (verdict?.kind === 'checked' && verdict.passed && entryOf(this.state, taskId)?.state === 'checking')
          return this.land(taskId, done.base, done.result, verdict.gates);
        if (signal?.aborted) return this.putBack('stopped during the merge; queued again');
        // its batch is red (or its check could not run): every task of the batch is checked on its own prefix now
        const members = chainOf(this.state)
          .filter((e) => e.coveredBy === head.coveredBy)
          .map((e) => e.taskId);
        this.apply({
          type: 'split',
          taskId,
          members: [...members, ...(head.coveredBy ? [head.coveredBy] : [])],
          detail: `its batch (with ${head.coveredBy}) was red on ${target}: checked on its own prefix now`,
        });
        return 'again';
      }
      case 'checked':
        if (signal?.aborted) return this.putBack('stopped during the merged check; queued again');
        if (!done.passed) {
          this.apply({ type: 'red', taskId, gates: done.gates, feedback: done.feedback, detail: done.detail });
          return this.current(taskId);
        }
        if (head.aside) {
          this.apply({
            type: 'review',
            taskId,
            base: done.base,
            result: done.result,
            gates: done.gates,
            detail: `the merged check passed on ${target}; it waits for your review (merge.review: manual)`,
          });
          return this.current(taskId);
        }
        return this.landGreen({ taskId, base: done.base, result: done.result, gates: done.gates });
    }
  }

  /** The head lands with the green heads right behind it in one step (see landTogether); alone, as before, when it cannot. */
  private async landGreen(head: GreenHead): Promise<MergeOutcome | 'moved' | 'again'> {
    await briefly(chainOf(this.state).map((e) => this.jobs.get(e.taskId)));
    await lookAgainAtTips(chainOf(this.state).slice(1), this.jobs, (id) => this.taskTip(id));
    if (chainHead(this.state)?.taskId !== head.taskId) return 'again'; // it left meanwhile (cancelled)
    const heads = greenHeadsFrom(chainOf(this.state), this.jobs, head);
    if (heads.length < 2) return this.land(head.taskId, head.base, head.result, head.gates);
    return this.whileLanding(
      heads.map((h) => h.taskId),
      async () => {
        if (!(await landTogether(this.pool.main, this.deps.target, heads)))
          return this.landOnce(head.taskId, head.base, head.result, head.gates);
        for (const h of heads) {
          const detail = `merged into ${this.deps.target} as ${h.result.slice(0, 10)}`;
          this.apply({ type: 'landed', taskId: h.taskId, commit: h.result, gates: h.gates, detail });
        }
        this.landedAhead.push(...heads.slice(1).map((h) => this.current(h.taskId)));
        return this.current(head.taskId);
      },
    );
  }

  private land(taskId: string, base: string, result: string, gates: Gates): Promise<MergeOutcome | 'moved'> {
    return this.whileLanding([taskId], () => this.landOnce(taskId, base, result, gates));
  }

  private async landOnce(taskId: string, base: string, result: string, gates: Gates): Promise<MergeOutcome | 'moved'> {
    const { target } = this.deps;
    let landed;
    try {
      landed = await this.pool.main.land(target, base, result);
    } catch (error) {
      if (error instanceof GitLockHeldError) this.putBack(`not merged: ${error.message}`);
      else this.apply({ type: 'error', taskId, detail: `merge failed: ${errorMessage(error)}` });
      if (error instanceof GitLockHeldError) throw error;
      return this.current(taskId);
    }
    if (landed.kind === 'moved') {
      // the person committed to the target: every prefix was built on the old tip
      this.putBack(`${target} moved during the check; the chain is built again on its new tip`);
      return 'moved';
    }
    if (landed.kind === 'waiting') {
      this.checked.set(taskId, { base, result, gates });
      this.apply({ type: 'wait', taskId, detail: landed.reason, files: landed.files });
      return this.current(taskId);
    }
    this.apply({ type: 'landed', taskId, commit: landed.commit, gates, detail: `merged into ${target} as ${landed.commit.slice(0, 10)}` });
    return this.current(taskId);
  }
}

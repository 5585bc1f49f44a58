import { createHash } from 'node:crypto';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../gates/types';
import { rootsOf } from '../../gates/testLocations';
import { workingTreeKey } from '../../git/treeKey';
import { untilStopped } from '../../util/untilStopped';

/** Stands for the tree's root in a run's output: `i` is its place in `rootsOf` (as given, or its real path). */
const rootMark = (i: number) => `\u0000root${i}\u0000`;

/** `output` with every spelling of `cwd` (`rootsOf`) made to name no tree (`mark`: another folder's marks, e.g. the workspace's). */
export function portableOutput(output: string, cwd: string, mark: (i: number) => string = rootMark): string {
  // the longest first: /var/x inside /private/var/x must not be taken for the root
  const marks = rootsOf(cwd)
    .map((root, i) => ({ root, mark: mark(i) }))
    .sort((a, b) => b.root.length - a.root.length);
  return marks.reduce((text, r) => text.split(r.root).join(r.mark), output);
}

/** A `portableOutput` read in the tree at `cwd`, each root under the same spelling. */
export function localizedOutput(output: string, cwd: string, mark: (i: number) => string = rootMark): string {
  const roots = rootsOf(cwd);
  return [0, 1].reduce((text, i) => text.split(mark(i)).join(roots[i] ?? roots[0]), output);
}

/** `value` with `change` applied to every string in it, however deep (a run's output, its test locations…). */
export function everyString<T>(value: T, change: (text: string) => string): T {
  if (typeof value === 'string') return change(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => everyString(v, change)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, everyString(v, change)])) as T;
  return value;
}

/** A whole run's result (its output and every other field: test locations…) naming no tree: kept for other trees. */
export function portableResult(result: GateRunResult, cwd: string): GateRunResult {
  return everyString(result, (text) => portableOutput(text, cwd));
}

/** A `portableResult` read in the tree at `cwd`. */
export function localizedResult(result: GateRunResult, cwd: string): GateRunResult {
  return everyString(result, (text) => localizedOutput(text, cwd));
}

/** A run that ended, for others to take: its result naming no tree, and the task it was made for. */
interface Kept {
  result: GateRunResult;
  taskId: string | undefined;
  /** Read from the runs shared between runs (`SharedGateRuns`): made by another run. */
  otherRun?: boolean;
}

/**
 * Gate runs kept between runs (`sharedGateRuns.ts`, `RALPH_GATE_RUNS_DIR`), under a key of their
 * own; results as `portableResult` makes them.
 */
export interface SharedGateRuns {
  /** The key across runs of `request`, whose key in the run is made of `material`; undefined: not shared across runs. */
  keyFor(material: string, request: GateRunRequest): Promise<string | undefined>;
  /** The result kept under `key`; undefined when there is none, or it cannot be read. */
  read(key: string): Promise<GateRunResult | undefined>;
  /** Keeps `result` under `key`; never fails. */
  write(key: string, result: GateRunResult): Promise<void>;
}

/**
 * The run's results by what decides them (issues 23, 37): the command, the exact tree it runs
 * on and the environment it sees. A command run on a tree in an environment gives what any other
 * run of it there gives, wherever the tree is checked out; so within one run a result is taken
 * again instead of run again — by the gates, the task's `check`, the proof runs, the merged
 * checks, the runs at a task's base and the agent's own `run_command` of a gate's command
 * (`loop/task/agentGateRuns.ts`, made by this same runner). The agents that start on one commit share
 * the run at their base; a merged check whose tree is one already checked (the first task onto
 * the tip, a task's tree) takes that result; a task that starts on a commit the queue just landed
 * takes the merged check's run as its base run; a gate takes the agent's own run of it.
 *
 * The key (`keyFor`): `workingTreeKey` — the content and modes of every file that is not ignored,
 * committed or not, untracked ones included, `.ralph/` and ignored files left out — the gate's
 * command and kind, the folder it runs in within the tree, and the runner's `environment`: the
 * whole environment of its process (less Ralph's per-run variables), its sandbox, its shell. Any
 * change of any of them is another key; a runner that cannot describe its environment never
 * shares. What is outside the key (an ignored file the suite reads, a file outside the tree, the
 * network, the clock) is the user's to declare: a gate with `reuse: false` always runs.
 *
 * - A run under way is shared: who asks meanwhile waits for it (and runs their own when it
 *   was stopped, crashed, or ended in a way they do not take).
 * - Kept: runs that ended (an exit code, not stopped, not timed out), whole (every field of the
 *   result, its paths made portable). A passing result is taken by every request; a failing one
 *   only by requests that say so (`reuse: 'any'`, the runs that learn what is red at a base or a
 *   tip) and by the task it was made for (its agent's own run of the gate's command, an earlier
 *   iteration's gate on the same tree, kept for the task even when the tree's first run was
 *   another's or the base's) — a failure the agent is told of is always a run made
 *   for its task, so a failure that does not reproduce is not fed back twice. A result is taken only by a request whose time limit it
 *   ended within. Re-runs of a failed gate (`rerunFailures`), `reuse: 'none'` and a gate with
 *   `reuse: false` always run, and are not kept.
 * - Lives for one run: a later run may meet another machine (installed tools, the network).
 *   Runs shared between runs are opt-in (`shared`: `RALPH_GATE_RUNS_DIR`, `sharedGateRuns.ts`,
 *   its key stricter: the installed dependencies, Ralph's own code): a key this run has not run
 *   yet is looked up there first. Kept there: a passing result, and a failing one made for a
 *   `reuse: 'any'` request; taken from there as from another request of this run made for no
 *   task (a failure only by `reuse: 'any'` requests): a task's own failing runs stay in its run.
 */
export class GateRunCache {
  private readonly runs = new Map<string, Promise<Kept | undefined>>();
  /**
   * Runs a task made itself on a key whose run it did not take (another's failure, or the run at
   * its base, made for no task): by key and task id. Its later iterations on the same tree take them.
   */
  private readonly taskRuns = new Map<string, Kept>();
  /** The runs of `runs` that have ended. */
  private readonly settled = new WeakSet<Promise<Kept | undefined>>();
  /** Runs made (shared or not) and results taken again instead (for the tests and the bench). */
  readonly counts = { started: 0, reused: 0 };

  constructor(private readonly shared?: SharedGateRuns) {}

  /** `inner` with this cache in front of it (each task loop and the merge queue have their own runner; the cache is the run's). */
  around(inner: GateRunner): GateRunner {
    return {
      run: (request) => this.run(inner, request),
      environment: (request) => inner.environment?.(request) ?? Promise.resolve(undefined),
    };
  }

  /**
   * The key of `request` run by `inner` (see the class); undefined when its tree or environment
   * cannot be told. `tree`: `workingTreeKey(request.cwd)` read for this same request just before.
   */
  async keyFor(
    inner: GateRunner,
    request: Pick<GateRunRequest, 'cwd' | 'gate' | 'timeoutMs'>,
    tree?: Promise<string | undefined>,
  ): Promise<string | undefined> {
    const what = await this.materialOf(inner, request, tree);
    return what === undefined ? undefined : createHash('sha256').update(what).digest('hex');
  }

  /** What `keyFor` digests. */
  private async materialOf(
    inner: GateRunner,
    request: Pick<GateRunRequest, 'cwd' | 'gate' | 'timeoutMs'>,
    treeKey: Promise<string | undefined> = workingTreeKey(request.cwd),
  ): Promise<string | undefined> {
    const [tree, environment] = await Promise.all([
      treeKey,
      inner.environment ? inner.environment({ ...request }) : Promise.resolve(undefined),
    ]);
    if (tree === undefined || environment === undefined) return undefined;
    return JSON.stringify([tree, request.gate.command, request.gate.kind, portableOutput(environment, request.cwd)]);
  }

  /** The key across runs of `request`, whose key in the run is made of `what` (see `SharedGateRuns`); undefined when there are none or it is not shared. */
  private async sharedKeyFor(what: string, request: GateRunRequest): Promise<string | undefined> {
    if (!this.shared || request.gate.report) return undefined;
    return this.shared.keyFor(what, request).catch(() => undefined);
  }

  /**
   * The result another run kept under `crossKey`, made this run's for `key` (as a run made for
   * no task) unless this run has run the key meanwhile.
   */
  private async fromOtherRun(key: string, crossKey: string): Promise<void> {
    const stored = await this.shared?.read(crossKey).catch(() => undefined);
    if (!stored || this.runs.has(key)) return;
    const kept = Promise.resolve<Kept>({ result: stored, taskId: undefined, otherRun: true });
    this.runs.set(key, kept);
    this.settled.add(kept);
  }

  private async run(inner: GateRunner, request: GateRunRequest): Promise<GateRunResult> {
    const reuse = request.reuse ?? 'passing';
    if (reuse === 'none' || request.gate.reuse === false) {
      this.counts.started++;
      return inner.run(request);
    }
    // read once for the part and the whole command's key: nothing runs in the tree between the two (this request has not started)
    const tree = workingTreeKey(request.cwd);
    const what = await this.materialOf(inner, request, tree).catch(() => undefined);
    if (what === undefined) {
      this.counts.started++;
      return inner.run(request);
    }
    const key = createHash('sha256').update(what).digest('hex');
    const whole = request.whole ? await this.wholeRun(inner, request, request.whole, tree) : undefined;
    if (whole) return whole;
    let crossKey: Promise<string | undefined> | undefined;
    for (;;) {
      if (request.signal?.aborted) return { exitCode: null, timedOut: false, aborted: true, output: 'stopped', durationMs: 0 };
      const shared = this.runs.get(key);
      if (!shared) {
        // a key this run has not run yet: another run's result first (asked once per request)
        const cross = await (crossKey ??= this.sharedKeyFor(what, request));
        if (cross) await this.fromOtherRun(key, cross);
        if (this.runs.has(key)) continue; // another run's result, or this run's started meanwhile
        return this.start(key, inner, request, cross);
      }
      const kept = await untilStopped(
        shared.catch(() => undefined),
        request.signal,
      );
      if (request.signal?.aborted) continue;
      if (!kept) {
        // the run waited for was stopped, timed out or crashed: kept by no one, so one of its waiters runs it again (and keeps it)
        if (this.runs.get(key) === shared) this.runs.delete(key);
        continue;
      }
      const { result: portable, taskId } = kept;
      const failureTaken = reuse === 'any' || (taskId !== undefined && taskId === request.taskId);
      if ((portable.exitCode === 0 || failureTaken) && portable.durationMs < request.timeoutMs) return this.taken(kept, request);
      // a failure it does not take, or a run longer than its time limit: the task's own run of this
      // key made since (its earlier iteration on this tree), or its own run now, kept for the task
      const mine = request.taskId === undefined ? undefined : this.taskRuns.get(`${key}\u0000${request.taskId}`);
      if (mine && mine.result.durationMs < request.timeoutMs) return this.taken(mine, request);
      return this.runForTask(key, inner, request);
    }
  }

  /** `kept` taken for `request`, read in its tree. */
  private taken(kept: Kept, request: GateRunRequest): GateRunResult {
    this.counts.reused++;
    const taken = localizedResult(kept.result, request.cwd);
    request.onOutput?.(taken.output);
    return { ...taken, reused: true, ...(kept.otherRun ? { otherRun: true } : {}) };
  }

  /** Runs `request` itself (the key's run is one it does not take); kept for its task, which takes it again on this tree. */
  private async runForTask(key: string, inner: GateRunner, request: GateRunRequest): Promise<GateRunResult> {
    this.counts.started++;
    const result = await inner.run(request);
    const kept = keptOf(result, request);
    if (kept && request.taskId !== undefined) this.taskRuns.set(`${key}\u0000${request.taskId}`, kept);
    return result;
  }

  /**
   * A finished passing run of the gate's whole command on the request's tree (or its task's own
   * failing one), taken for the part the request asks for: the whole suite says more than a part.
   * A run still going is not waited for: the part may well end sooner.
   */
  private async wholeRun(
    inner: GateRunner,
    request: GateRunRequest,
    command: string,
    tree: Promise<string | undefined>,
  ): Promise<GateRunResult | undefined> {
    const wholeRequest = { ...request, gate: { ...request.gate, command } };
    const key = await this.keyFor(inner, wholeRequest, tree).catch(() => undefined);
    const shared = key ? this.runs.get(key) : undefined;
    if (!shared || !this.settled.has(shared)) return undefined;
    const kept = await shared.catch(() => undefined);
    if (!kept || kept.result.durationMs >= request.timeoutMs) return undefined;
    if (kept.result.exitCode !== 0 && !(kept.taskId !== undefined && kept.taskId === request.taskId)) return undefined;
    this.counts.reused++;
    const taken = localizedResult(kept.result, request.cwd);
    request.onOutput?.(taken.output);
    return { ...taken, reused: true, whole: true };
  }

  private async start(key: string, inner: GateRunner, request: GateRunRequest, crossKey?: string): Promise<GateRunResult> {
    this.counts.started++;
    const running = inner.run(request);
    const kept = running.then(async (r) => {
      const made = keptOf(r, request);
      // for other runs: a pass, or a failure learned at a base or a tip (a task's own failure stays in its run)
      if (made && crossKey && (made.result.exitCode === 0 || request.reuse === 'any'))
        await this.shared?.write(crossKey, made.result).catch(() => undefined);
      return made;
    });
    this.runs.set(key, kept);
    void kept.then(
      () => this.settled.add(kept),
      () => undefined,
    );
    const drop = () => {
      if (this.runs.get(key) === kept) this.runs.delete(key);
    };
    try {
      if (!(await kept)) drop();
      return await running;
    } catch (error) {
      drop();
      throw error;
    }
  }
}

/** What of a run is kept for others: a run that ended (an exit code, not stopped, not timed out), naming no tree. */
function keptOf(r: GateRunResult, request: GateRunRequest): Kept | undefined {
  if (r.exitCode === null || r.aborted || r.timedOut) return undefined;
  const { reused: _reused, otherRun: _otherRun, ...result } = r;
  return { result: portableResult(result, request.cwd), taskId: request.taskId };
}

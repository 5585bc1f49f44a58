import type { GateConfig } from '../config/schema';
import type { BaseVerdict } from '../gates/baseVerdict';
import type { TestCounts } from '../gates/parsers/types';
import { runGit } from '../git/gitExec';

/** What one run of a gate at a base tells every task that starts there, workspace-relative (no tree's own paths in it). */
export interface BaseRun {
  tests?: TestCounts;
  verdict: BaseVerdict;
}

/** Stands for the tree's root in a test's name (node:test names a file that failed to load by its absolute path): `i` is its place in `rootsOf` (as given, or its real path). */
const rootMark = (i: number) => `\u0000root${i}\u0000`;

/** `run` with the names that spell out the tree's root (`rootsOf` order: as given, real path) made to name no tree. */
export function portable(run: BaseRun, roots: readonly string[]): BaseRun {
  // the longest first: /var/x inside /private/var/x must not be taken for the root
  const longestFirst = roots.map((root, i) => ({ root, mark: rootMark(i) })).sort((a, b) => b.root.length - a.root.length);
  return mapNames(run, (name) => longestFirst.reduce((n, r) => n.split(r.root).join(r.mark), name));
}

/** A `portable` run read in the tree whose roots (`rootsOf`) are `roots`. */
export function localized(run: BaseRun, roots: readonly string[]): BaseRun {
  return mapNames(run, (name) => [0, 1].reduce((n, i) => n.split(rootMark(i)).join(roots[i] ?? roots[0]), name));
}

function mapNames(run: BaseRun, f: (name: string) => string): BaseRun {
  const named = <T extends { name: string }>(list: readonly T[]) => list.map((t) => ({ ...t, name: f(t.name) }));
  const tests = run.tests && { ...run.tests, failures: named(run.tests.failures), ...(run.tests.names ? { names: named(run.tests.names) } : {}) };
  return { ...(tests ? { tests } : {}), verdict: { ...run.verdict, failing: named(run.verdict.failing) } };
}

/**
 * The run's cache of gate runs at a task's base (issue 19's integrity baseline): agents that
 * start tasks on the same commit run the same suite on identical trees, so the first run is
 * shared — tasks starting together wait for that one run rather than each starting one. Keyed by
 * the commit and the gate's whole definition; only a clean tree at a commit is shared (when
 * unsure, not shared). A run that was stopped or failed is dropped: the next task runs its own.
 * Lives for one run (a later run may see another machine state: installed tools, the network).
 */
export class BaseRunCache {
  private readonly runs = new Map<string, Promise<BaseRun | undefined>>();
  /** Runs actually started (for the tests and the run's own accounting). */
  started = 0;

  /**
   * The key of `gate` run in `root`: its HEAD and the gate's definition, or undefined when the
   * tree has changes to tracked files (or git cannot say). Untracked paths are part of the key:
   * a worktree's linked folders are the same in every worktree, a file the user left is not.
   */
  async keyFor(root: string, gate: GateConfig): Promise<string | undefined> {
    const head = await runGit(root, ['rev-parse', '--verify', 'HEAD']);
    if (head.code !== 0) return undefined;
    const status = await runGit(root, ['status', '--porcelain', '--untracked-files=normal', '--ignore-submodules=none']);
    if (status.code !== 0) return undefined;
    const lines = status.stdout.split('\n').filter(Boolean);
    if (lines.some((l) => !l.startsWith('?? '))) return undefined;
    return JSON.stringify([head.stdout.trim(), lines.sort(), gate]);
  }

  /**
   * The shared run under `key`, started with `produce` when none is under way or done. A waiter
   * stops waiting when its own `stop` fires; when the run it waited for was stopped (its owner's
   * signal) or threw, it runs its own. `produce` returns undefined when stopped.
   */
  async run(key: string, stop: AbortSignal, produce: (stop: AbortSignal) => Promise<BaseRun | undefined>): Promise<BaseRun | undefined> {
    for (;;) {
      if (stop.aborted) return undefined;
      const shared = this.runs.get(key);
      if (!shared) return this.start(key, stop, produce);
      const result = await untilStopped(shared.catch(() => undefined), stop);
      if (result) return result;
      // stopped here, or the run waited for was stopped or failed (its owner dropped it): run it here
    }
  }

  private async start(key: string, stop: AbortSignal, produce: (stop: AbortSignal) => Promise<BaseRun | undefined>): Promise<BaseRun | undefined> {
    this.started++;
    const running = produce(stop).then((result) => (stop.aborted ? undefined : result));
    this.runs.set(key, running);
    const drop = () => {
      if (this.runs.get(key) === running) this.runs.delete(key);
    };
    try {
      const result = await running;
      if (!result) drop();
      return result;
    } catch (error) {
      drop();
      throw error;
    }
  }
}

/** `promise`, or undefined as soon as `stop` fires. */
function untilStopped<T>(promise: Promise<T | undefined>, stop: AbortSignal): Promise<T | undefined> {
  if (stop.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onStop = () => resolve(undefined);
    stop.addEventListener('abort', onStop, { once: true });
    void promise.then((value) => {
      stop.removeEventListener('abort', onStop);
      resolve(value);
    });
  });
}

import type { GateRunner, GateRunRequest, GateRunResult } from '../gates/types';
import { rootsOf } from '../gates/testLocations';
import { runGit } from '../git/gitExec';
import { untilStopped } from '../util/untilStopped';

/** Stands for the tree's root in a run's output: `i` is its place in `rootsOf` (as given, or its real path). */
const rootMark = (i: number) => `\u0000root${i}\u0000`;

/** `output` with every spelling of `cwd` (`rootsOf`) made to name no tree. */
export function portableOutput(output: string, cwd: string): string {
  // the longest first: /var/x inside /private/var/x must not be taken for the root
  const marks = rootsOf(cwd)
    .map((root, i) => ({ root, mark: rootMark(i) }))
    .sort((a, b) => b.root.length - a.root.length);
  return marks.reduce((text, r) => text.split(r.root).join(r.mark), output);
}

/** A `portableOutput` read in the tree at `cwd`, each root under the same spelling. */
export function localizedOutput(output: string, cwd: string): string {
  const roots = rootsOf(cwd);
  return [0, 1].reduce((text, i) => text.split(rootMark(i)).join(roots[i] ?? roots[0]), output);
}

/** Untracked paths that do not make a tree another: the orchestrator's own folder. */
const OWN = /^\.ralph(\/|$)/;

/**
 * The run's gate runs by tree (issue 23): a gate run on a clean tree — tracked files exactly a
 * commit's tree, the same untracked paths — gives what any other run of the same definition on
 * that tree would give, wherever the tree is checked out. So within one run a result is taken
 * again instead of run again: the agents that start on one commit share the run at their base
 * (issue 19's integrity baseline); a merged check whose prefix is the tree a task's own gates
 * passed on (the first task onto the tip) takes that pass; a task that starts on a commit the
 * queue just landed takes the merged check's run as its base run.
 *
 * - A run under way is shared: who asks meanwhile waits for it (and runs their own when it
 *   was stopped, or ended in a way they do not take).
 * - Kept: runs that ended (an exit code, not stopped, not timed out). A passing result is
 *   taken by every request; a failing one only by requests that say so (`reuse: 'any'`, the
 *   runs that learn what is red at a base) — a failure the agent is told of is always its own
 *   run, so a failure that does not reproduce is not fed back twice. Re-runs of a failed gate
 *   (`rerunFailures`), `reuse: 'none'` and a gate with `reuse: false` (its result depends on
 *   more than the tree) always run.
 * - Lives for one run: a later run may meet another machine (installed tools, the network).
 */
export class GateRunCache {
  private readonly runs = new Map<string, Promise<GateRunResult | undefined>>();
  /** Runs started, and results taken again instead (for the tests and the bench). */
  readonly counts = { started: 0, reused: 0 };

  /** `inner` with this cache in front of it (each task loop and the merge queue have their own runner; the cache is the run's). */
  around(inner: GateRunner): GateRunner {
    return { run: (request) => this.run(inner, request) };
  }

  /**
   * The key of `request`'s gate in its tree: the tree of HEAD, the untracked paths and the
   * gate's whole definition; undefined when tracked files differ from HEAD (or git cannot say).
   */
  async keyFor(request: Pick<GateRunRequest, 'cwd' | 'gate' | 'timeoutMs'>): Promise<string | undefined> {
    const [tree, status] = await Promise.all([
      runGit(request.cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{tree}']),
      runGit(request.cwd, ['status', '--porcelain', '-z', '--untracked-files=all', '--ignore-submodules=none']),
    ]);
    if (tree.code !== 0 || status.code !== 0) return undefined;
    const entries = status.stdout.split('\0').filter(Boolean);
    if (entries.some((e) => !e.startsWith('?? '))) return undefined;
    const untracked = entries.map((e) => e.slice(3)).filter((p) => !OWN.test(p));
    return JSON.stringify([tree.stdout.trim(), untracked.sort(), request.gate, request.timeoutMs]);
  }

  private async run(inner: GateRunner, request: GateRunRequest): Promise<GateRunResult> {
    const reuse = request.reuse ?? 'passing';
    const key = reuse === 'none' || request.gate.reuse === false ? undefined : await this.keyFor(request).catch(() => undefined);
    if (!key) return inner.run(request);
    for (;;) {
      if (request.signal?.aborted) return { exitCode: null, timedOut: false, aborted: true, output: 'stopped', durationMs: 0 };
      const shared = this.runs.get(key);
      if (!shared) return this.start(key, inner, request);
      const portable = await untilStopped(
        shared.catch(() => undefined),
        request.signal,
      );
      if (portable && (portable.exitCode === 0 || reuse === 'any')) {
        this.counts.reused++;
        const output = localizedOutput(portable.output, request.cwd);
        request.onOutput?.(output);
        return { ...portable, output, reused: true };
      }
      if (request.signal?.aborted) continue;
      // a failure it does not take, or the run waited for was stopped or could not run: its own run
      return inner.run(request);
    }
  }

  private async start(key: string, inner: GateRunner, request: GateRunRequest): Promise<GateRunResult> {
    this.counts.started++;
    const running = inner.run(request);
    const kept = running.then((r) =>
      r.exitCode !== null && !r.aborted && !r.timedOut ? { ...r, output: portableOutput(r.output, request.cwd) } : undefined,
    );
    this.runs.set(key, kept);
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

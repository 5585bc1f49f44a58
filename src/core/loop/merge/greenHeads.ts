import type { MergeWorkspace } from '../../git/integrate';
import { chainOf, type MergeEntry, type MergeQueueState, nextToBuild } from './mergeChain';
import type { Gates, Job } from './mergeChecks';

/** A head of the chain whose prefix passed its merged check: the commit it lands as, on the commit before it. */
export interface GreenHead {
  taskId: string;
  base: string;
  result: string;
  gates: Gates;
}

/**
 * The chain's head (decided green) and the heads right behind it that may land in the same
 * step: in chain order, each green already (its own merged check passed, not a batch's), none
 * held aside for review nor checked ahead of its own gates, each built on the commit of the one before it. Stops at the first that
 * is not, so the target only ever moves to a commit whose tree, and every tree before it, was checked.
 */
export function greenHeadsFrom(chain: readonly MergeEntry[], jobs: ReadonlyMap<string, Job>, head: GreenHead): GreenHead[] {
  const heads = [head];
  if (chain[0]?.taskId !== head.taskId) return heads;
  for (const entry of chain.slice(1)) {
    const job = jobs.get(entry.taskId);
    const value = job?.value;
    // checked ahead of its own gates (not confirmed, or its branch not looked at again since): it lands on its own turn
    if (
      entry.aside ||
      entry.provisional ||
      job?.ahead ||
      entry.state !== 'checking' ||
      !entry.passed ||
      value?.kind !== 'checked' ||
      !value.passed
    )
      break;
    if (value.base !== heads.at(-1)!.result) break;
    heads.push({ taskId: entry.taskId, base: value.base, result: value.result, gates: value.gates });
  }
  return heads;
}

/**
 * The confirmed entries of the chain that were checked ahead of their own gates: their branch's
 * tip is looked at again (a file read each), and one that did not move since its check began may
 * land with the head (a moved one waits for its own turn, where it is built again).
 */
export async function lookAgainAtTips(
  chain: readonly MergeEntry[],
  jobs: ReadonlyMap<string, Job>,
  tipOf: (taskId: string) => Promise<string | undefined>,
): Promise<void> {
  await Promise.all(
    chain.map(async (e) => {
      const job = jobs.get(e.taskId);
      const tip = job?.ahead?.tip;
      if (e.provisional || !job || tip === undefined) return;
      if ((await tipOf(e.taskId).catch(() => undefined)) === tip && job.ahead?.tip === tip) job.ahead = undefined;
    }),
  );
}

/**
 * Lands several green heads in one step: one look at the person's tree and one move of the
 * target (compare-and-swap from the first head's base), to the last head's commit — each task
 * still its own commit, and every commit the target gains a checked one. False (nothing moved)
 * for a single head, or when the step cannot be taken together (the target moved, the person's
 * files in the way, an error): the head then lands alone, as before.
 */
export async function landTogether(main: MergeWorkspace, target: string, heads: readonly GreenHead[]): Promise<boolean> {
  if (heads.length < 2) return false;
  const landed = await main.land(target, heads[0].base, heads.at(-1)!.result).catch(() => undefined);
  return landed?.kind === 'landed';
}

/**
 * The checks behind the head that are about to settle (a prefix with no gate to run is green a
 * few promise steps after it was built) get that long, one turn of the event loop at most,
 * before the heads that land together are counted; a check that runs a gate is not waited for.
 */
export async function briefly(jobs: readonly (Job | undefined)[]): Promise<void> {
  const pending = jobs.filter((j): j is Job => j !== undefined && !j.settled);
  if (pending.length === 0) return;
  await Promise.race([Promise.allSettled(pending.map((j) => j.done)), new Promise((resolve) => setImmediate(resolve))]);
}

/**
 * The tasks that join the chain now, in batches of consecutive tasks (none taken out of a red
 * batch; only the last of each is checked): a check for each of the `concurrency` places no
 * check holds (a prefix not yet green that is not covered by another's), each of up to
 * `batchSize` tasks. While every place is held, queued tasks wait, and the ones that arrive
 * meanwhile join one batch once a place frees (were each built as it came, every one would be
 * a check of its own, waiting for a merge worktree, and no batch would ever form).
 */
export function joiningGroups(state: MergeQueueState, concurrency: number, batchSize: number): MergeEntry[][] {
  const chain = chainOf(state);
  const places = concurrency - chain.filter((e) => !e.passed && e.coveredBy === undefined).length;
  if (places <= 0) return [];
  const groups: MergeEntry[][] = [];
  for (const e of nextToBuild(state, chain.length + places * batchSize)) {
    const last = groups.at(-1);
    if (!e.alone && last && last.length < batchSize && !last[0].alone) last.push(e);
    else groups.push([e]);
  }
  return groups.slice(0, places);
}

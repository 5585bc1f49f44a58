import { RalphError } from '../../errors';
import type { MergeState } from '../../events';
import type { ConflictHunk } from '../../git/integrate';

export type { MergeState };

export interface MergeEntry {
  taskId: string;
  title: string;
  state: MergeState;
  /** Order of arrival; the queue is first come, first merged (a task put back keeps its place). */
  seq: number;
  /** Times this task entered the queue. */
  attempts: number;
  detail?: string;
  files?: string[];
  hunks?: ConflictHunk[];
  gates?: { name: string; passed: boolean; summary: string }[];
  /** What the task's agent must fix when the merged result is red (the gates' fix items). */
  feedback?: string[];
  commit?: string;
  /** `review`: the checked result (on `base`, the target's tip then) that waits for a person. */
  base?: string;
  result?: string;
  /** The task's fail-to-pass proof, one line (the tests that fail on its base code), when it needed one. */
  proof?: string;
  /** In the chain (merging, checking): its place; the lowest is the chain's head, the next to land. */
  pos?: number;
  /** In the chain: the tasks ahead of it whose merged changes its prefix is built on (target + ahead… + this task). */
  ahead?: string[];
  /** In the chain: its prefix (or its batch's) passed the merged check; it lands once it is the head. */
  passed?: boolean;
  /** In the chain: the task whose check covers this one's prefix too (`merge.batchSize` > 1). */
  coveredBy?: string;
  /** Held for a person's review once green (`merge.review` manual): the prefixes behind it are built without it. */
  aside?: boolean;
  /** Taken out of a red batch: checked on its own prefix from now on, never batched again. */
  alone?: boolean;
  /**
   * Checked ahead of its own gates (`merge.checkAhead`): its agent signalled COMPLETE and its own
   * gates are still running. Built and checked like any entry, never decided (nor landed) until
   * its loop accepts COMPLETE (`confirm`) or takes it back (`withdraw`).
   */
  provisional?: boolean;
}

export interface MergeQueueState {
  entries: readonly MergeEntry[];
  seq: number;
  /** Chain places handed out so far. */
  pos: number;
}

type Verdict = { taskId: string };

export type MergeAction =
  /** `provisional`: checked ahead of its own gates, decided only once confirmed (an attempt is counted then). */
  | { type: 'enqueue'; taskId: string; title: string; proof?: string; provisional?: boolean }
  /** A provisional entry's loop accepted COMPLETE: it may be decided (and land) from now on. */
  | { type: 'confirm'; taskId: string; proof?: string }
  /** A provisional entry's loop did not accept COMPLETE: it leaves the queue, what was built on it is rebuilt. */
  | { type: 'withdraw'; taskId: string; detail: string }
  /** Joins the chain at its end: its prefix is built on `ahead` (active tasks, in chain order). */
  | { type: 'begin'; taskId: string; ahead?: string[]; aside?: boolean; coveredBy?: string }
  | { type: 'prepared'; taskId: string }
  /** The merged check of its prefix passed (and of the tasks it covers in its batch). */
  | { type: 'green'; taskId: string; gates?: MergeEntry['gates']; covers?: string[] }
  | ({ type: 'landed'; commit?: string; detail: string; gates?: MergeEntry['gates'] } & Verdict)
  | ({ type: 'conflict'; files: string[]; hunks: ConflictHunk[] } & Verdict)
  | ({ type: 'red'; detail: string; gates: MergeEntry['gates']; feedback: string[] } & Verdict)
  | ({ type: 'wait'; detail: string; files: string[] } & Verdict)
  /** The target moved under the check, or a stop: back to the queue (its place kept), and the tasks behind it too. */
  | { type: 'requeue'; taskId: string; detail: string }
  /** The checked result waits for a person: manual review, or the person's tree was in the way too long. */
  | ({ type: 'review'; detail: string; base: string; result: string; gates?: MergeEntry['gates']; files?: string[] } & Verdict)
  | ({ type: 'error'; detail: string } & Verdict)
  /** A red batch: its tasks are checked one by one (each on its own prefix) from now on. */
  | { type: 'split'; taskId: string; members: string[]; detail: string }
  /** The task left the queue (cancelled, its branch dropped): whatever was built on it is rebuilt. */
  | { type: 'cancel'; taskId: string; detail: string };

export class MergeQueueError extends RalphError {
  constructor(message: string) {
    super(message, 'merge-queue');
  }
}

export const EMPTY_QUEUE: MergeQueueState = { entries: [], seq: 0, pos: 0 };
const ACTIVE: ReadonlySet<MergeState> = new Set(['merging', 'checking']);
const PENDING: ReadonlySet<MergeState> = new Set(['queued', 'waiting']);
/** Actions that decide a task: only ever the chain's head (every task ahead of it has landed or left). */
const HEAD_ONLY: ReadonlySet<MergeAction['type']> = new Set(['landed', 'conflict', 'red', 'wait', 'review', 'error', 'split']);
const CHAIN_FIELDS = { pos: undefined, ahead: undefined, passed: undefined, coveredBy: undefined, aside: undefined } as const;

export const isActive = (e: MergeEntry): boolean => ACTIVE.has(e.state);

/** The chain in order: the tasks being built or checked, the head first. */
export function chainOf(state: MergeQueueState): MergeEntry[] {
  return state.entries.filter(isActive).sort((a, b) => (a.pos ?? 0) - (b.pos ?? 0));
}

/** The chain's head: the task that lands (or is decided) next. */
export function chainHead(state: MergeQueueState): MergeEntry | undefined {
  return chainOf(state)[0];
}

/**
 * The queue as a pure state machine of a speculative chain (Zuul's, GitLab's merge trains):
 * each task joins the chain's end with its prefix built on the tasks ahead of it (target + A,
 * target + A + B, …) and checked at the same time as theirs; queued → merging → checking →
 * merged | conflict | failed | review | waiting. Only the head is ever decided: it lands once its
 * own prefix passed, so the target is green at every commit it gets and every landed tree was
 * checked. A head that leaves the chain unlanded takes the prefixes built on it down with it:
 * those go back to `queued` (their place kept) and are built again without it. A task that
 * reached `merged` can never be queued again. Every illegal step throws rather than being
 * ignored: a silent no-op here is how merges get reported that never happened.
 */
export function reduceMergeQueue(state: MergeQueueState, action: MergeAction): MergeQueueState {
  const expect = (...states: MergeState[]): MergeEntry => expectEntry(state, action, states);
  switch (action.type) {
    case 'enqueue':
      return enqueued(state, action);
    case 'confirm':
      return confirmed(state, action);
    case 'withdraw':
      return withdrawn(state, action);
    case 'begin':
      return begun(state, expect('queued', 'waiting'), action);
    case 'prepared':
      return replace(state, { ...expect('merging'), state: 'checking' });
    case 'green':
      return green(state, expect('checking'), action);
    case 'landed':
      return landed(state, expect('merging', 'checking'), action);
    case 'conflict':
      return leave(
        state,
        {
          ...expect('merging', 'checking'),
          state: 'conflict',
          files: action.files,
          hunks: action.hunks,
          detail: `conflict in ${action.files.join(', ')}`,
        },
        'it conflicts',
      );
    case 'red':
      return leave(
        state,
        { ...expect('checking'), state: 'failed', detail: action.detail, gates: action.gates, feedback: action.feedback },
        'its merged check is red',
      );
    case 'wait':
      return leave(
        state,
        { ...expect('checking'), state: 'waiting', detail: action.detail, files: action.files },
        'it waits for your working tree',
      );
    case 'requeue':
      return leave(state, { ...expect('merging', 'checking'), state: 'queued', detail: action.detail }, 'it was put back');
    case 'review': {
      const e = expect('checking', 'waiting');
      return leave(
        state,
        {
          ...e,
          state: 'review',
          detail: action.detail,
          base: action.base,
          result: action.result,
          gates: action.gates ?? e.gates,
          files: action.files,
        },
        'it waits for a review',
      );
    }
    case 'error':
      return leave(state, { ...expect('merging', 'checking'), state: 'failed', detail: action.detail }, 'its merge failed');
    case 'split':
      return split(state, expect('merging', 'checking'), action.members, action.detail);
    case 'cancel': {
      const e = expect('queued', 'waiting', 'merging', 'checking', 'conflict', 'failed', 'review');
      const gone = leave(state, { ...e, state: 'failed' }, `${e.taskId} left the queue (${action.detail})`);
      return { ...gone, entries: gone.entries.filter((x) => x.taskId !== e.taskId) };
    }
  }
}

/** `e`'s prefix passed (and the tasks its batch covers with it). */
function green(state: MergeQueueState, e: MergeEntry, action: Extract<MergeAction, { type: 'green' }>): MergeQueueState {
  const covers = new Set(action.covers ?? []);
  const mark = (x: MergeEntry): MergeEntry =>
    x.taskId === e.taskId
      ? { ...x, passed: true, gates: action.gates ?? x.gates }
      : covers.has(x.taskId) && isActive(x)
        ? { ...x, passed: true }
        : x;
  return { ...state, entries: state.entries.map(mark) };
}

/** `e` is on the target now: the prefixes behind it no longer build on it, they build on the target. */
function landed(state: MergeQueueState, e: MergeEntry, action: Extract<MergeAction, { type: 'landed' }>): MergeQueueState {
  const next = replace(state, {
    ...e,
    ...CHAIN_FIELDS,
    state: 'merged',
    commit: action.commit,
    detail: action.detail,
    gates: action.gates ?? e.gates,
  });
  const behind = (x: MergeEntry): MergeEntry =>
    x.ahead?.includes(e.taskId) ? { ...x, ahead: x.ahead.filter((id) => id !== e.taskId) } : x;
  return { ...next, entries: next.entries.map(behind) };
}

/** The action's entry, in one of `states` (and the chain's head, for the actions that decide): else the step is illegal and throws. */
function expectEntry(state: MergeQueueState, action: MergeAction, states: readonly MergeState[]): MergeEntry {
  const entry = state.entries.find((e) => e.taskId === action.taskId);
  if (!entry) throw new MergeQueueError(`task ${action.taskId} is not in the merge queue`);
  if (!states.includes(entry.state))
    throw new MergeQueueError(`task ${action.taskId} is ${entry.state} in the merge queue; "${action.type}" needs ${states.join(' or ')}`);
  if (HEAD_ONLY.has(action.type) && isActive(entry) && chainHead(state)?.taskId !== entry.taskId) {
    throw new MergeQueueError(
      `task ${action.taskId} is not the head of the merge chain (${chainHead(state)?.taskId} is): only the head is decided`,
    );
  }
  if (HEAD_ONLY.has(action.type) && entry.provisional)
    throw new MergeQueueError(`task ${action.taskId} is checked ahead of its own gates: it is decided only once its loop accepts COMPLETE`);
  return entry;
}

function enqueued(state: MergeQueueState, action: Extract<MergeAction, { type: 'enqueue' }>): MergeQueueState {
  const entry = state.entries.find((e) => e.taskId === action.taskId);
  if (entry?.state === 'merged') throw new MergeQueueError(`task ${action.taskId} is already merged; it is never merged twice`);
  if (entry && entry.state !== 'conflict' && entry.state !== 'failed' && entry.state !== 'review')
    throw new MergeQueueError(`task ${action.taskId} is already ${entry.state} in the merge queue`);
  const seq = state.seq + 1;
  const fresh: MergeEntry = {
    taskId: action.taskId,
    title: action.title,
    state: 'queued',
    seq,
    // a provisional entry is an attempt only once its loop confirms it
    attempts: (entry?.attempts ?? 0) + (action.provisional ? 0 : 1),
    ...(action.proof ? { proof: action.proof } : {}),
    ...(action.provisional ? { provisional: true } : {}),
  };
  return { ...state, seq, entries: [...state.entries.filter((e) => e.taskId !== action.taskId), fresh] };
}

function provisionalEntry(state: MergeQueueState, action: MergeAction): MergeEntry {
  const entry = entryOf(state, action.taskId);
  if (!entry) throw new MergeQueueError(`task ${action.taskId} is not in the merge queue`);
  if (!entry.provisional)
    throw new MergeQueueError(`task ${action.taskId} is not checked ahead of its gates; "${action.type}" needs a provisional entry`);
  return entry;
}

/** Its loop accepted COMPLETE: the entry keeps its place, its prefix and its check, and counts as an attempt. */
function confirmed(state: MergeQueueState, action: Extract<MergeAction, { type: 'confirm' }>): MergeQueueState {
  const e = provisionalEntry(state, action);
  const { provisional: _, ...rest } = e;
  return replace(state, { ...rest, attempts: e.attempts + 1, ...(action.proof ? { proof: action.proof } : {}) });
}

/**
 * Its loop did not accept COMPLETE (its own gates, its proof, a stop): the entry leaves the chain
 * as `failed` ("taken back", its attempts as they were, so the views see it go), and whatever was
 * built on it is rebuilt without it. Its next COMPLETE queues it again.
 */
function withdrawn(state: MergeQueueState, action: Extract<MergeAction, { type: 'withdraw' }>): MergeQueueState {
  const e = provisionalEntry(state, action);
  const why = `${e.taskId} was taken back (${action.detail})`;
  // the check's gates go with it: they were of a prefix that no longer exists
  const { provisional: _, gates: __, ...rest } = e;
  return leave(state, { ...rest, state: 'failed', detail: `taken back: ${action.detail}` }, why);
}

/** `e` joins the chain's end, its prefix built on `ahead` (tasks of the chain, none held aside for review). */
function begun(state: MergeQueueState, e: MergeEntry, action: Extract<MergeAction, { type: 'begin' }>): MergeQueueState {
  const chain = chainOf(state);
  for (const id of action.ahead ?? []) {
    const a = chain.find((c) => c.taskId === id);
    if (!a) throw new MergeQueueError(`task ${action.taskId} cannot be built on ${id}: it is not in the merge chain`);
    if (a.aside)
      throw new MergeQueueError(
        `task ${action.taskId} cannot be built on ${id}: it waits for a review, the prefixes behind it are built without it`,
      );
  }
  if (action.coveredBy !== undefined && action.coveredBy === action.taskId)
    throw new MergeQueueError(`task ${action.taskId} cannot cover itself`);
  const pos = state.pos + 1;
  const next: MergeEntry = {
    ...e,
    state: 'merging',
    detail: undefined,
    files: undefined,
    hunks: undefined,
    gates: undefined,
    feedback: undefined,
    ...CHAIN_FIELDS,
    pos,
    ahead: action.ahead ?? [],
    ...(action.aside ? { aside: true } : {}),
    ...(action.coveredBy ? { coveredBy: action.coveredBy } : {}),
  };
  return { ...replace(state, next), pos };
}

/** A red batch: the whole batch goes back, each to be checked on its own prefix, so that the red one among them is found. */
function split(state: MergeQueueState, e: MergeEntry, others: readonly string[], detail: string): MergeQueueState {
  const members = new Set([e.taskId, ...others]);
  let next = state;
  for (const m of chainOf(state).filter((x) => members.has(x.taskId))) {
    if (isActive(entryOf(next, m.taskId)!))
      next = leave(next, { ...entryOf(next, m.taskId)!, state: 'queued', detail }, 'its batch was split');
  }
  return { ...next, entries: next.entries.map((x) => (members.has(x.taskId) ? { ...x, alone: true, detail } : x)) };
}

function replace(state: MergeQueueState, next: MergeEntry): MergeQueueState {
  return { ...state, entries: state.entries.map((e) => (e.taskId === next.taskId ? next : e)) };
}

/**
 * `gone` leaves the chain unlanded: every prefix built on it (directly or through another) is
 * invalid and goes back to `queued`, its place in line kept, to be built again without it — and
 * so is every task whose batch's check went with it (the checker comes after the tasks it
 * covers, so they are looked at again until none is left).
 */
function leave(state: MergeQueueState, gone: MergeEntry, why: string): MergeQueueState {
  let next = replace(state, ACTIVE.has(gone.state) ? gone : { ...gone, ...CHAIN_FIELDS });
  const chain = chainOf(next).filter((x) => x.taskId !== gone.taskId);
  const dropped = new Set([gone.taskId]);
  const invalid = (x: MergeEntry) =>
    (x.ahead ?? []).some((id) => dropped.has(id)) || (x.coveredBy !== undefined && dropped.has(x.coveredBy));
  for (let more = true; more;) {
    const found = chain.filter((x) => !dropped.has(x.taskId) && invalid(x));
    for (const x of found) dropped.add(x.taskId);
    more = found.length > 0;
  }
  for (const x of chain.filter((c) => dropped.has(c.taskId)))
    next = replace(next, { ...x, ...CHAIN_FIELDS, state: 'queued', detail: `rebuilt without ${gone.taskId}: ${why}` });
  return next;
}

/**
 * The entries that join the chain next, oldest first (a task put back keeps its place), as
 * long as fewer than `room` tasks are in the chain; a merge that waits for the user's tree
 * lets queued ones pass and is tried again when none is left, so one dirty file does not hold
 * up a night's work.
 */
export function nextToBuild(state: MergeQueueState, room: number): MergeEntry[] {
  const free = room - chainOf(state).length;
  if (free <= 0) return [];
  const rank = (e: MergeEntry) => (e.state === 'waiting' ? 1 : 0);
  const pending = state.entries.filter((e) => PENDING.has(e.state)).sort((a, b) => rank(a) - rank(b) || a.seq - b.seq);
  // a waiting one only once nothing queued is left and the chain is empty (it needs the tip, not a prefix)
  const queued = pending.filter((e) => e.state === 'queued');
  if (queued.length > 0) return queued.slice(0, free);
  return chainOf(state).length === 0 ? pending.slice(0, 1) : [];
}

/** The oldest pending entry (what the queue looks at next); kept for callers that only ask "is anything to merge". */
export function nextToMerge(state: MergeQueueState): MergeEntry | undefined {
  return nextToBuild(state, Number.MAX_SAFE_INTEGER)[0] ?? chainHead(state);
}

export function entryOf(state: MergeQueueState, taskId: string): MergeEntry | undefined {
  return state.entries.find((e) => e.taskId === taskId);
}

/** The head is checked ahead of its own gates, or its batch's check is: it waits for its loop's word (`confirm`, `withdraw`). */
export function awaitsConfirmation(state: MergeQueueState, head: MergeEntry): boolean {
  return head.provisional === true || (head.coveredBy !== undefined && entryOf(state, head.coveredBy)?.provisional === true);
}

/** The tasks a new prefix is built on: the chain's tasks that carry a merged result (not held aside for review). */
export function prefixOf(state: MergeQueueState): string[] {
  return chainOf(state)
    .filter((e) => !e.aside)
    .map((e) => e.taskId);
}

import type { Task, TaskStatus } from '../../tasks/schema';
import type { TaskStore } from '../../tasks/store';
import { READY } from '../../tasks/select';

/** Ends of a run that wait for a person; an action of theirs makes the task go on. */
const WAITS_FOR_PERSON: ReadonlySet<TaskStatus> = new Set(['needs_help', 'blocked', 'timeout', 'review']);

/** How often a run that waits on the person looks at the task store (another process may answer). */
export const PERSON_LOOK_MS = 1_000;

/** What a person did since the run left some of its tasks. */
export interface PersonActed {
  /** Ready again (answered, unblocked, limit raised, changes requested): the run starts them again. */
  reopened: string[];
  /** Approved reviews (status back to in_progress): the queue lands them. */
  approved: string[];
}

/**
 * Tasks that ended in this run waiting for a person and that the person has acted on since:
 * ready again, or (held for review) approved.
 */
export function personActed(endedAs: ReadonlyMap<string, TaskStatus>, tasks: readonly Task[]): PersonActed {
  const reopened: string[] = [];
  const approved: string[] = [];
  for (const task of tasks) {
    const ended = endedAs.get(task.id);
    if (!ended || !WAITS_FOR_PERSON.has(ended)) continue;
    if (READY.has(task.status)) reopened.push(task.id);
    else if (ended === 'review' && task.status === 'in_progress') approved.push(task.id);
  }
  return { reopened, approved };
}

/**
 * What the parallel autopilot keeps about the person: the tasks this run left waiting for them,
 * the merges that wait on their own files (each for at most `merge.waitForUserMinutes`), and a
 * wake-up when they act — a write to the task store from this process at once, another
 * process's at the next look. Never a wait without a bound: once nothing else runs, the run ends
 * and leaves the questions and reviews to the person.
 */
export class PersonWaits {
  private readonly endedAs = new Map<string, TaskStatus>();
  private readonly waitingSince = new Map<string, number>();
  private readonly wakers = new Set<() => void>();
  private readonly subscription: { dispose(): void };

  constructor(private readonly deps: { store: TaskStore; waitForUserMs: number; now?: () => number }) {
    this.subscription = deps.store.onDidChange(() => this.poke());
  }

  dispose(): void {
    this.subscription.dispose();
    this.poke();
  }

  /** A task of this run ended (or was held for review) as `status`. */
  ended(taskId: string, status: TaskStatus): void {
    this.endedAs.set(taskId, status);
    this.waitingSince.delete(taskId);
  }

  /** The tasks the person acted on since; they are no longer counted as waiting. */
  async acted(): Promise<PersonActed> {
    if (![...this.endedAs.values()].some((s) => WAITS_FOR_PERSON.has(s))) return { reopened: [], approved: [] };
    const acted = personActed(this.endedAs, await this.deps.store.list());
    for (const id of [...acted.reopened, ...acted.approved]) this.endedAs.delete(id);
    return acted;
  }

  /** Whether anything of this run waits for the person (so a running run looks for their answers). */
  get waiting(): boolean {
    return [...this.endedAs.values()].some((s) => WAITS_FOR_PERSON.has(s)) || this.waitingSince.size > 0;
  }

  /** A merge of `taskId` waits on the person's files (again); true once it has waited past the bound. */
  mergeWaits(taskId: string): boolean {
    const now = (this.deps.now ?? Date.now)();
    const since = this.waitingSince.get(taskId) ?? now;
    this.waitingSince.set(taskId, since);
    return now - since >= this.deps.waitForUserMs;
  }

  /** When the bound of `taskId`'s waiting merge runs out (ms from now), if it waits. */
  msUntilGiveUp(taskId: string): number | undefined {
    const since = this.waitingSince.get(taskId);
    return since === undefined ? undefined : Math.max(0, since + this.deps.waitForUserMs - (this.deps.now ?? Date.now)());
  }

  mergeGoesOn(taskId: string): void {
    this.waitingSince.delete(taskId);
  }

  /** Resolves at the person's next possible action: a store write here, or the next look; a stop ends it. */
  nextLook(stop: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        stop.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, PERSON_LOOK_MS);
      this.wakers.add(done);
      stop.addEventListener('abort', done, { once: true });
    });
  }

  /** Something changed that the person may have done (a store write, Retry Now): look at once. */
  poke(): void {
    for (const wake of [...this.wakers]) wake();
  }
}

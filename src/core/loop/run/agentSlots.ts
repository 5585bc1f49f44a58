import type { RalphEventBody } from '../../events';
import { untilStopped } from '../../util/untilStopped';
import { fillSlots, slotGiven, slotWanted, type SchedulerState } from './scheduler';
import type { AgentSlot } from '../task/types';

/** The autopilot's schedule, as the slots read and change it (each change in one step, never across an await). */
export interface ScheduleHolder {
  get(): SchedulerState;
  set(state: SchedulerState): void;
}

export interface AgentSlotsDeps {
  schedule: ScheduleHolder;
  /** `loop.maxParallel`: the model conversations at once. */
  maxParallel: number;
  emit(body: RalphEventBody): void;
  /** A slot was given away: the autopilot's next turn starts the next ready task in it. */
  wake(): void;
}

/**
 * The agent slots of a parallel run (issue 34) on the autopilot's schedule. A slot is a model
 * conversation: a task's loop gives its slot away as its gates start (the autopilot wakes and
 * starts the next ready task in it) and asks for one back before its next conversation — at
 * once when one is free and no task sent back before it waits, else at the autopilot's next turn
 * that has one (`resume`, before any new start). Each move is told as an `agent.slot` event.
 */
export class AgentSlots {
  /** Loops waiting for their slot: resolved when it is theirs. */
  private readonly waiters = new Map<string, () => void>();

  constructor(private readonly d: AgentSlotsDeps) {}

  /** The slot of `taskId`'s loop. */
  of(taskId: string): AgentSlot {
    return { release: () => this.release(taskId), take: (stop) => this.take(taskId, stop) };
  }

  /** The free slots to the tasks their gates sent back, in the order they asked (each autopilot turn, before it starts tasks). */
  resume(): void {
    const filled = fillSlots(this.d.schedule.get(), [], this.d.maxParallel);
    if (filled.resume.length === 0) return;
    this.d.schedule.set(filled.state);
    this.granted(filled.resume);
  }

  /** These tasks' loops, waiting for a slot, have one now (the schedule says so already). */
  granted(taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      this.d.emit({ type: 'agent.slot', taskId, state: 'model' });
      const go = this.waiters.get(taskId);
      this.waiters.delete(taskId);
      go?.();
    }
  }

  private release(taskId: string): void {
    const before = this.d.schedule.get();
    const after = slotGiven(before, taskId);
    if (after === before) return; // it holds none
    this.d.schedule.set(after);
    this.d.emit({ type: 'agent.slot', taskId, state: 'gates' });
    // a task sent back by its gates takes it at once; else the autopilot starts the next task in it
    this.resume();
    this.d.wake();
  }

  private async take(taskId: string, stop: AbortSignal): Promise<boolean> {
    const before = this.d.schedule.get();
    const after = slotWanted(before, taskId);
    if (after === before) return false; // it holds its slot still
    this.d.schedule.set(after);
    const mine = new Promise<void>((resolve) => this.waiters.set(taskId, resolve));
    this.resume();
    if (!this.waiters.has(taskId)) return false; // a slot was free: taken at once
    this.d.emit({ type: 'agent.slot', taskId, state: 'waiting' });
    await untilStopped(mine, stop);
    this.waiters.delete(taskId); // stopped meanwhile: its loop ends (the autopilot takes it off the schedule)
    return true;
  }
}

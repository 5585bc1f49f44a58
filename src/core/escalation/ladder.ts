import type { Task } from '../tasks/schema';

/**
 * The tier a task starts on: security and architecture work starts at the top of the ladder;
 * otherwise complexity ≤ 4 → tier 0, ≤ 8 → tier 1, else tier 2 — clamped to the ladder.
 */
export function initialTier(task: Pick<Task, 'type' | 'complexity'>, ladderLength: number): number {
  const top = Math.max(0, ladderLength - 1);
  if (task.type === 'security' || task.type === 'architecture') return top;
  const tier = task.complexity <= 4 ? 0 : task.complexity <= 8 ? 1 : 2;
  return Math.min(tier, top);
}

/** Escalation bookkeeping, kept in the checkpoint so a resumed run continues exactly where it was. */
export interface EscalationState {
  tier: number;
  /** Consecutive failed iterations on the current tier. */
  failuresAtTier: number;
  /** Consecutive failed iterations on the top tier (the council's trigger). */
  failuresAtTop: number;
  /** Iteration at which the council last met, if ever. */
  councilAt?: number;
  history: EscalationRecord[];
}

export interface EscalationRecord {
  iteration: number;
  from: string;
  to: string;
  reason: string;
}

export interface EscalationSettings {
  ladder: readonly string[];
  threshold: number;
  councilAfter: number;
}

/** What the loop does after judging an iteration. */
export interface EscalationStep {
  state: EscalationState;
  /** Set when the tier changed. */
  escalated?: EscalationRecord;
  /** Convene the bug council before the next iteration. */
  convene: boolean;
  /** Guidance for the next iteration's context (retry with context, try another approach…). */
  guidance?: string;
}

export function startEscalation(task: Pick<Task, 'type' | 'complexity'>, ladderLength: number): EscalationState {
  return { tier: initialTier(task, ladderLength), failuresAtTier: 0, failuresAtTop: 0, history: [] };
}

/**
 * Counts one iteration's result. First failure → the same model again, with what failed;
 * the next ones → the same model, told to take a different approach; `threshold` consecutive
 * failures → the next tier up. At the top, `councilAfter` consecutive failures convene the
 * council. `force` (a persistent high security finding, a stuck loop) escalates to the top at
 * once; `raise` (a new high security finding) one tier up at once.
 */
export function recordIterationResult(
  state: EscalationState,
  settings: EscalationSettings,
  result: { failed: boolean; iteration: number; reason?: string; force?: string; raise?: string },
): EscalationStep {
  const top = settings.ladder.length - 1;
  if (!result.failed && !result.force && !result.raise) return { state: { ...state, failuresAtTier: 0, failuresAtTop: 0 }, convene: false };

  const failuresAtTier = state.failuresAtTier + 1;
  const atTop = state.tier >= top;
  // `raise` (a new high security finding) goes one tier up at once, without convening the council at the top
  const shouldRaise = !atTop && (result.force !== undefined || result.raise !== undefined || failuresAtTier >= settings.threshold);
  if (shouldRaise) {
    const to = result.force ? top : state.tier + 1;
    const escalated: EscalationRecord = {
      iteration: result.iteration,
      from: settings.ladder[state.tier],
      to: settings.ladder[to],
      reason:
        result.force ?? result.raise ?? `${failuresAtTier} consecutive failed iterations${result.reason ? ` (${result.reason})` : ''}`,
    };
    return {
      state: { ...state, tier: to, failuresAtTier: 0, failuresAtTop: 0, history: [...state.history, escalated] },
      escalated,
      convene: false,
      guidance: `The previous attempts on ${escalated.from} failed (${escalated.reason}). You are a stronger model taking over: read the notes, find the root cause, fix it.`,
    };
  }
  const failuresAtTop = atTop ? state.failuresAtTop + 1 : 0;
  const convene = atTop && (failuresAtTop >= settings.councilAfter || result.force !== undefined);
  const guidance =
    failuresAtTier === 1
      ? `The previous iteration failed${result.reason ? `: ${result.reason}` : ''}. Look at what failed and why before changing anything.`
      : `${failuresAtTier} iterations in a row have failed${result.reason ? ` (${result.reason})` : ''}. Do not repeat the last fix: take a different approach.`;
  return {
    state: {
      ...state,
      failuresAtTier,
      failuresAtTop: convene ? 0 : failuresAtTop,
      councilAt: convene ? result.iteration : state.councilAt,
    },
    convene,
    guidance,
  };
}

export function currentModel(state: EscalationState, ladder: readonly string[]): string {
  return ladder[Math.min(state.tier, ladder.length - 1)];
}

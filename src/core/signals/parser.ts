import type { Signal } from './types';

/** DESIGN §4: `/<ralph>(\w+)(?::\s*(.+?))?<\/ralph>/s`, applied globally. */
const SIGNAL_PATTERN = /<ralph>(\w+)(?::\s*(.+?))?<\/ralph>/gs;

/** Every well-formed signal in `text`, in order. Unknown kinds and malformed payloads are skipped. */
export function parseSignals(text: string): Signal[] {
  const signals: Signal[] = [];
  for (const match of text.matchAll(SIGNAL_PATTERN)) {
    const kind = match[1].toUpperCase();
    const payload = match[2]?.trim();
    const signal = toSignal(kind, payload);
    if (signal) signals.push(signal);
  }
  return signals;
}

function toSignal(kind: string, payload: string | undefined): Signal | undefined {
  switch (kind) {
    case 'COMPLETE':
      return { kind: 'COMPLETE' };
    case 'PROGRESS': {
      const percent = Number.parseFloat(payload ?? '');
      if (!Number.isFinite(percent)) return undefined;
      return { kind: 'PROGRESS', percent: clampPercent(percent) };
    }
    case 'BLOCKED':
      return { kind: 'BLOCKED', reason: payload || 'no reason given' };
    case 'NEEDS_HELP':
      return { kind: 'NEEDS_HELP', question: payload || 'no question given' };
    default:
      return undefined;
  }
}

export function clampPercent(value: number): number {
  return Math.max(0, Math.min(100, Math.round(value)));
}

/**
 * The signal that decides an iteration, from everything the agent signalled in it.
 * A terminal signal wins over progress; among terminal ones the last given counts,
 * except that BLOCKED and NEEDS_HELP outrank a COMPLETE (the agent contradicted itself,
 * so a human should look).
 */
export function decisiveSignal(signals: readonly Signal[]): Signal | undefined {
  const terminal = signals.filter((s) => s.kind !== 'PROGRESS');
  const stopper = [...terminal].reverse().find((s) => s.kind === 'BLOCKED' || s.kind === 'NEEDS_HELP');
  if (stopper) return stopper;
  const complete = [...terminal].reverse().find((s) => s.kind === 'COMPLETE');
  if (complete) return complete;
  return [...signals].reverse().find((s) => s.kind === 'PROGRESS');
}

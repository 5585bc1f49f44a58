import type { QueueEntryView } from './panelState';

/** Which prefix the entry's check is on and what it waits for: `main + T-1 + T-2 · green, lands after T-1`. */
export function chainLine(e: QueueEntryView, target: string): string {
  const c = e.chain!;
  const prefix = [target, ...c.ahead, e.taskId].join(' + ');
  const covered = c.coveredBy ? ` · checked with its batch (the check of ${c.coveredBy} covers it)` : '';
  const waits = c.ahead.length > 0 ? `, lands after ${c.ahead.join(', ')}` : '';
  const status =
    c.place === 1
      ? c.passed
        ? e.provisional
          ? 'green, lands once its own gates pass'
          : 'green, landing'
        : 'head of the chain: lands next once green'
      : c.passed
        ? `green${waits}`
        : `checking side by side${waits}`;
  const ahead = e.provisional ? ' · checked ahead of its own gates: decided once they pass' : '';
  return `${c.aside ? 'held for review once green (the ones behind are built without it) · ' : ''}chain #${c.place}: ${prefix} · ${status}${covered}${ahead}`;
}

/** A signal the agent gives, as text `<ralph>KIND[:payload]</ralph>` or through the equivalent tool. */
export type Signal =
  | { kind: 'COMPLETE'; summary?: string; promiseEvidence?: string; artifactPaths?: string[] }
  | { kind: 'PROGRESS'; percent: number; note?: string }
  | { kind: 'BLOCKED'; reason: string }
  | { kind: 'NEEDS_HELP'; question: string };

export type SignalKind = Signal['kind'];

/** How a signal is shown in the timeline and the logs: `PROGRESS:50`, `BLOCKED:reason`. */
export function formatSignal(signal: Signal): string {
  switch (signal.kind) {
    case 'COMPLETE':
      return 'COMPLETE';
    case 'PROGRESS':
      return `PROGRESS:${signal.percent}`;
    case 'BLOCKED':
      return `BLOCKED:${signal.reason}`;
    case 'NEEDS_HELP':
      return `NEEDS_HELP:${signal.question}`;
  }
}

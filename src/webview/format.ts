/** How numbers, times and signals read in the panel. */
import { panelUsd } from '../protocol/money';

export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return ms < 1000 && ms > 0 ? `${Math.round(ms)}ms` : `${s}s`;
}

export function clock(iso: string | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : date.toLocaleTimeString(undefined, { hour12: false });
}

export function usd(value: number): string {
  return panelUsd(value);
}

/** A task's cost so far: dollars, "no price known", or "included (editor plan)" for editor models. */
export function costText(task: { costUsd: number; unpricedTokens: number; includedTokens: number }, short = false): string {
  if (task.costUsd === 0 && task.unpricedTokens === 0 && task.includedTokens > 0) return short ? 'included' : 'included (editor plan)';
  if (task.costUsd === 0 && task.unpricedTokens > 0) return short ? 'no price' : 'no price known';
  return `${usd(task.costUsd)}${task.unpricedTokens > 0 && !short ? ' + unpriced tokens' : ''}`;
}

export function tokens(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export function shortSha(sha: string | undefined): string {
  return sha ? sha.slice(0, 7) : '';
}

/** The signal's kind (COMPLETE, PROGRESS…) for its colour; `none` when there is none. */
export function signalKind(signal: string | undefined): string {
  if (!signal) return 'none';
  const kind = signal.split(':')[0].toLowerCase().replace('_', '-');
  return ['complete', 'progress', 'blocked', 'needs-help'].includes(kind) ? kind : 'none';
}

/** A status in words; the two that wait for the person say so. */
export function statusLabel(status: string): string {
  if (status === 'needs_help') return 'needs you';
  if (status === 'review') return 'ready for review';
  return status.replace('_', ' ');
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

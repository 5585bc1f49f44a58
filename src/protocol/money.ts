/**
 * Dollars as the panel shows them, the same rule as the reports' (`core/util/money.ts`; the
 * webview carries no core code): cents from a dollar up, at least three significant digits
 * below it — a $0.0692 task reads $0.0692, not $0.07.
 */
export function panelUsd(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value === 0) return '$0.00';
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  return abs >= 1 || Number(abs.toPrecision(3)) >= 1 ? `${sign}$${abs.toFixed(2)}` : `${sign}$${abs.toPrecision(3)}`;
}

/**
 * A dollar amount as reports, the CLI and the panel show it: from a dollar up, cents; below
 * it, at least three significant digits, so a provider-reported $0.0692 reads $0.0692, not
 * $0.07 (a run of cheap calls is told apart from a free one). Pure: the webview uses it too.
 */
export function usdText(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value === 0) return '$0.00';
  const abs = Math.abs(value);
  if (abs >= 1) return `${value < 0 ? '-' : ''}$${abs.toFixed(2)}`;
  return `${value < 0 ? '-' : ''}$${Number(abs.toPrecision(3)) >= 1 ? '1.00' : abs.toPrecision(3)}`;
}

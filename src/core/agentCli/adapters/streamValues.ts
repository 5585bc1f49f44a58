/**
 * The loosely typed values of an agent CLI's JSON stream, read the same way by every adapter's
 * parser: a number or 0, a string or '', any value as text, a tool's output clipped.
 */

/** How much of one tool result's output an event keeps (the whole output is the CLI's). */
export const TOOL_OUTPUT_LIMIT = 4000;

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A string as it is; anything else as its JSON ('' for none). */
export function text(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

export function clip(value: string, limit: number = TOOL_OUTPUT_LIMIT): string {
  return value.length > limit ? `${value.slice(0, limit)}…` : value;
}

/** One line of a CLI's JSON stream as an object; undefined for a line that is not one (its banners, a cut line). */
export function jsonObjectOf(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(trimmed) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

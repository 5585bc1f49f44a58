/**
 * Bounds for what Ralph keeps on disk, where the size is set by a model or a repository rather
 * than by Ralph: a 200 kB BLOCKED reason, an iteration that touched 100,000 files. The live
 * events and the terminal still see everything; the files under `.ralph/` keep a bounded part
 * and say how much was left out.
 */

/** A model-provided reason, question or summary as stored (task store, checkpoint, reports). */
export const STORED_TEXT_MAX = 4_000;
/** File names kept in a list (checkpoint record, final report, run log) before it is summarized. */
export const STORED_FILES_MAX = 200;
/** Any one string inside an event of the run log. */
export const LOGGED_TEXT_MAX = 8_000;
/** Any one array inside an event of the run log. */
export const LOGGED_LIST_MAX = 200;
/** A run-log line longer than this is written with its strings and arrays bounded. */
export const LOGGED_LINE_MAX = 16_000;

/** `text`, or its first `max` characters and how many more there were. */
export function boundText(text: string, max = STORED_TEXT_MAX): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters not kept]`;
}

export function boundOptionalText(text: string | undefined, max = STORED_TEXT_MAX): string | undefined {
  return text === undefined ? undefined : boundText(text, max);
}

/** The first `max` entries, and the count of all when there were more. */
export function boundList<T>(items: readonly T[], max = STORED_FILES_MAX): { kept: T[]; total?: number } {
  return items.length <= max ? { kept: [...items] } : { kept: items.slice(0, max), total: items.length };
}

/** A file list for people: the first `max` names, then one line saying how many more. */
export function summarizedFiles(files: readonly string[], max = STORED_FILES_MAX): string[] {
  if (files.length <= max) return [...files];
  return [...files.slice(0, max), `… and ${files.length - max} more (${files.length} in all)`];
}

/**
 * A JSON value with every string and array bounded (objects walked, depth-limited): for
 * records whose shape is open, like the events of the run log. An array past its bound keeps
 * its head and ends with a string saying how many entries were left out.
 */
export function boundDeep(
  value: unknown,
  limits: { text: number; list: number } = { text: LOGGED_TEXT_MAX, list: LOGGED_LIST_MAX },
  depth = 0,
): unknown {
  if (typeof value === 'string') return boundText(value, limits.text);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 12) return '[nested too deep: not kept]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, limits.list).map((item) => boundDeep(item, limits, depth + 1));
    return value.length > limits.list ? [...kept, `… and ${value.length - limits.list} more (${value.length} in all)`] : kept;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = boundDeep(item, limits, depth + 1);
  return out;
}

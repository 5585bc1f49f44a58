import * as path from 'node:path';

// CSI (colours, cursor moves), OSC (hyperlinks, titles) and the two-byte escapes.
// eslint-disable-next-line no-control-regex -- matching terminal control characters is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;

/** Strips terminal escapes. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * Lines of output without escapes. A bare `\r` (progress redraws) counts as a line break, so a
 * summary written over a spinner still starts its own line.
 */
export function outputLines(text: string): string[] {
  return stripAnsi(text).split(/\r?\n|\r/);
}

/** The line the command runner puts where it cut the middle of a long output (`omissionMarker`, commands/processRunner.ts). */
const OMITTED = /^… \[\d+ characters omitted\] …$/;

/** Whether output was cut out between these lines: a list read from them is not every test. */
export function hasOmission(lines: readonly string[]): boolean {
  return lines.some((l) => OMITTED.test(l));
}

const STACK_FRAME = /^\s*(?:at\s|❯\s|node:internal)/;

/**
 * The first meaningful lines of an error: blank lines and stack frames dropped, at most
 * `max` lines, each trimmed. Undefined when nothing is left.
 */
export function errorMessage(lines: readonly string[], max = 4): string | undefined {
  const kept: string[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (STACK_FRAME.test(raw)) {
      if (kept.length) break;
      continue;
    }
    kept.push(line.length > 300 ? `${line.slice(0, 297)}...` : line);
    if (kept.length >= max) break;
  }
  return kept.length ? kept.join('\n') : undefined;
}

/** A path as the agent should see it: relative to the gate's cwd when it lies inside it. */
export function displayPath(file: string, cwd?: string): string {
  if (!cwd || !path.isAbsolute(file)) return file;
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : file;
}

/**
 * JSON values embedded in output (tools print warnings around their `--json`): every
 * top-level object or array that starts a line and parses, in order. Strings are honoured
 * when matching brackets, so a `}` inside a message does not end the value early.
 */
export function embeddedJson(text: string): unknown[] {
  const found: unknown[] = [];
  const clean = stripAnsi(text);
  let from = 0;
  while (from < clean.length) {
    const start = nextValueStart(clean, from);
    if (start < 0) break;
    const end = matchingEnd(clean, start);
    if (end > 0) {
      try {
        found.push(JSON.parse(clean.slice(start, end + 1)));
        from = end + 1;
        continue;
      } catch {
        // not JSON after all (a log line that starts with a brace); look further on
      }
    }
    from = start + 1;
  }
  return found;
}

/**
 * A line that opens a JSON object or array: `{` then a key or the line's end, `[` then a
 * value or the line's end. Log lines such as `[INFO] …` or `{ pending }` are not candidates,
 * which keeps a long log from being rescanned from every bracket.
 */
function nextValueStart(text: string, from: number): number {
  const re = /^[ \t]*(?:\{(?=[ \t]*(?:"|\}|\r|$))|\[(?=[ \t]*(?:[{["\]\d-]|true|false|null|\r|$)))/gm;
  re.lastIndex = from;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const at = m.index + m[0].length - 1;
    if (at >= from) return at;
  }
  return -1;
}

function matchingEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** A number from a regex group, 0 when the group did not match. */
export function num(value: string | undefined): number {
  return value ? Number(value) : 0;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

import type { ParsedGateOutput, TypeErrorItem } from './types';
import { displayPath } from './text';

const PLAIN = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/;
const PRETTY = /^(.+?):(\d+):(\d+) - error (TS\d+): (.*)$/;
const GLOBAL = /^error (TS\d+): (.*)$/;
const FOUND = /^Found (\d+) errors?\b/;

/**
 * tsc (and vue-tsc, tsc -b): `file(line,col): error TS1234: msg`, its `--pretty` form
 * `file:line:col - error TS1234: msg`, and errors without a file (`error TS5023: …`). The
 * count is `Found N errors` when tsc printed it (the listed errors may have been cut off),
 * else the errors listed. Undefined when the output shows no sign of tsc.
 */
export function parseTypeScript(lines: readonly string[], cwd?: string): ParsedGateOutput['typeErrors'] {
  const errors: TypeErrorItem[] = [];
  let found: number | undefined;
  for (const line of lines) {
    const m = PLAIN.exec(line) ?? PRETTY.exec(line);
    if (m) {
      errors.push({ file: displayPath(m[1].trim(), cwd), line: Number(m[2]), message: `${m[4]}: ${m[5].trim()}` });
      continue;
    }
    const g = GLOBAL.exec(line.trim());
    if (g) {
      errors.push({ message: `${g[1]}: ${g[2].trim()}` });
      continue;
    }
    const f = FOUND.exec(line.trim());
    if (f) found = (found ?? 0) + Number(f[1]);
  }
  if (found === undefined && errors.length === 0) return undefined;
  return { count: Math.max(found ?? 0, errors.length), errors };
}

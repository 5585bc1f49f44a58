import type { TestCounts, TestName } from '../types';
import { completeNames } from './names';
import { errorMessage } from '../text';

const RESULT = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/;
/** `test x ... FAILED`, or `x --- FAILED` with `-q`. */
const FAILED_LINE = /^(?:test (\S+) \.\.\. FAILED|(\S+) --- FAILED)\s*$/;
const TEST_LINE = /^test (\S+) \.\.\. (ok|FAILED|ignored)\b/;
const PANIC_AT = /panicked at ([^\s:]+):\d+:\d+/;
const OUTPUT_HEADER = /^---- (\S+) std(?:out|err) ----\s*$/;

/**
 * `cargo test`: one `test result:` line per test binary (unit, integration, doc tests),
 * summed; failure messages from the `---- name stdout ----` blocks (the panic message).
 */
export function parseCargoTest(lines: readonly string[]): TestCounts | undefined {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  let found = false;
  for (const line of lines) {
    const m = RESULT.exec(line);
    if (!m) continue;
    found = true;
    counts.passed += Number(m[1]);
    counts.failed += Number(m[2]);
    counts.skipped += Number(m[3]);
  }
  if (!found) return undefined;
  counts.total = counts.passed + counts.failed + counts.skipped;
  const messages = new Map<string, string | undefined>();
  const files = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const h = OUTPUT_HEADER.exec(lines[i]);
    if (!h) continue;
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && !OUTPUT_HEADER.test(lines[j]) && !/^(failures:|stack backtrace:|note: )/.test(lines[j]); j++)
      body.push(lines[j]);
    // The "thread 'x' panicked at file:line:" line says where; the next lines say what.
    messages.set(h[1], errorMessage(body));
    const at = body.map((l) => PANIC_AT.exec(l)?.[1]).find(Boolean);
    if (at) files.set(h[1], at);
  }
  for (const line of lines) {
    const m = FAILED_LINE.exec(line);
    const name = m?.[1] ?? m?.[2];
    const file = name ? files.get(name) : undefined;
    if (name && !counts.failures.some((f) => f.name === name))
      counts.failures.push({ name, message: messages.get(name), ...(file ? { file } : {}) });
  }
  const names: TestName[] = [];
  for (const line of lines) {
    const t = TEST_LINE.exec(line);
    // doc tests (`src/lib.rs - f (line 3)`) have spaces in their names: they stay out of the inventory, which is then incomplete
    if (t) names.push({ name: t[1], status: t[2] === 'ok' ? 'pass' : t[2] === 'ignored' ? 'skip' : 'fail' });
  }
  return completeNames(counts, names);
}

import type { TestCounts } from '../types';
import { errorMessage } from '../text';

const RESULT = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/;
const FAILED_LINE = /^test (\S+) \.\.\. FAILED\s*$/;
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
  for (let i = 0; i < lines.length; i++) {
    const h = OUTPUT_HEADER.exec(lines[i]);
    if (!h) continue;
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && !OUTPUT_HEADER.test(lines[j]) && !/^(failures:|stack backtrace:|note: )/.test(lines[j]); j++) body.push(lines[j]);
    // The "thread 'x' panicked at file:line:" line says where; the next lines say what.
    messages.set(h[1], errorMessage(body));
  }
  for (const line of lines) {
    const m = FAILED_LINE.exec(line);
    if (m && !counts.failures.some((f) => f.name === m[1])) counts.failures.push({ name: m[1], message: messages.get(m[1]) });
  }
  return counts;
}

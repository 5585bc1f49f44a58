import type { TestCounts, TestName } from '../types';
import { completeNames } from './names';
import { errorMessage } from '../text';

const RESULT = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/;
/** `test x ... FAILED`, or `x --- FAILED` with `-q`. */
const FAILED_LINE = /^(?:test (\S+) \.\.\. FAILED|(\S+) --- FAILED)\s*$/;
const TEST_LINE = /^test (\S+) \.\.\. (ok|FAILED|ignored)\b/;
/** `Running tests/api.rs (target/…)`: an integration test binary, built from that file; `Running unittests src/lib.rs` holds the crate's inline tests. */
const RUNNING = /^\s+Running (unittests )?(\S+\.rs) \(/;
const OUTPUT_HEADER = /^---- (\S+) std(?:out|err) ----\s*$/;

/**
 * `cargo test`: one `test result:` line per test binary (unit, integration, doc tests),
 * summed; failure messages from the `---- name stdout ----` blocks (the panic message). A test
 * of an integration binary is defined in the file cargo names in its `Running tests/x.rs`
 * line; the crate's inline tests (`Running unittests src/lib.rs`) may live in any module file,
 * so theirs is left unsaid — never the panic's location, which is wherever the code panicked.
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
  const files = binaryFiles(lines);
  for (let i = 0; i < lines.length; i++) {
    const h = OUTPUT_HEADER.exec(lines[i]);
    if (!h) continue;
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && !OUTPUT_HEADER.test(lines[j]) && !/^(failures:|stack backtrace:|note: )/.test(lines[j]); j++)
      body.push(lines[j]);
    // The "thread 'x' panicked at file:line:" line says where; the next lines say what.
    messages.set(h[1], errorMessage(body));
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
    const file = t ? files.get(t[1]) : undefined;
    // doc tests (`src/lib.rs - f (line 3)`) have spaces in their names: they stay out of the inventory, which is then incomplete
    if (t) names.push({ name: t[1], status: t[2] === 'ok' ? 'pass' : t[2] === 'ignored' ? 'skip' : 'fail', ...(file ? { file } : {}) });
  }
  return completeNames(counts, names);
}

/** The file of each test of an integration binary (`Running tests/x.rs`); a name two binaries share is left without one. */
function binaryFiles(lines: readonly string[]): Map<string, string> {
  const seen = new Map<string, string>();
  const shared = new Set<string>();
  let file = '';
  for (const line of lines) {
    const running = RUNNING.exec(line);
    if (running) file = running[1] ? '' : running[2];
    else if (/^\s+Doc-tests /.test(line)) file = '';
    const t = TEST_LINE.exec(line);
    if (!t) continue;
    if (seen.has(t[1]) && seen.get(t[1]) !== file) shared.add(t[1]);
    seen.set(t[1], file);
  }
  return new Map([...seen].filter(([name, f]) => f && !shared.has(name)));
}

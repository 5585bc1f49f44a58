/**
 * mocha's spec reporter, then where the tier's time went (issue 45): its wall time, the slowest
 * tests and the slowest files (the sum of their tests). Works in parallel mode too, where each
 * file's events reach this process once the file's worker is done with it.
 * `RALPH_TEST_TIMES=<file>` also appends one JSON line per test ({file, title, ms}) to that file,
 * for `scripts/test-all.sh`'s table and for comparing runs.
 */
import { appendFileSync } from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

const SLOWEST = Number(process.env.RALPH_TEST_SLOWEST) || 10;

interface Timed {
  file: string;
  title: string;
  ms: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const shortFile = (file: string) => path.relative(process.cwd(), file).replace(/^out[\\/]/, '');

class TimedReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const started = Date.now();
    const timed: Timed[] = [];
    const keep = (test: Mocha.Test) => {
      timed.push({ file: shortFile(test.file ?? '?'), title: test.fullTitle(), ms: test.duration ?? 0 });
    };
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, keep);
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, keep);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const out = process.env.RALPH_TEST_TIMES;
      if (out) appendFileSync(out, timed.map((t) => JSON.stringify(t)).join('\n') + (timed.length ? '\n' : ''));
      report(timed, Date.now() - started);
    });
  }
}

function report(timed: Timed[], wallMs: number): void {
  if (timed.length === 0) return;
  const byFile = new Map<string, number>();
  for (const t of timed) byFile.set(t.file, (byFile.get(t.file) ?? 0) + t.ms);
  const total = timed.reduce((sum, t) => sum + t.ms, 0);
  const lines = [
    '',
    `  Time: ${seconds(wallMs)} wall, ${seconds(total)} in tests (${timed.length} tests, ${byFile.size} files)`,
    `  Slowest tests:`,
    ...[...timed]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST)
      .map((t) => `    ${seconds(t.ms).padStart(8)}  ${t.file}: ${t.title.length > 110 ? `${t.title.slice(0, 109)}…` : t.title}`),
    `  Slowest files:`,
    ...[...byFile]
      .sort((a, b) => b[1] - a[1])
      .slice(0, SLOWEST)
      .map(([file, ms]) => `    ${seconds(ms).padStart(8)}  ${file}`),
  ];
  console.log(lines.join('\n'));
}

export = TimedReporter;

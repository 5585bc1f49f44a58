/**
 * What the output parsers read out of a gate's output. Every field is optional: a field is
 * present only when the parser recognised that tool's output, so "absent" means "unknown",
 * never "zero" (a passing `tsc` prints nothing at all).
 */

/** The gate kinds of DESIGN §3; the parser picks its families from it. */
export type ParserGateKind = 'tests' | 'types' | 'lint' | 'security' | 'coverage' | 'custom';

export interface ParseOptions {
  /** The gate's working directory: coverage files are read from it, absolute paths shown relative to it. */
  cwd?: string;
}

/** Test counts, summed over every runner summary found (a monorepo prints several). */
export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
  total: number;
  /** `message` is the first lines of the error, without the stack; `file` where the failing test is, when the output says. */
  failures: { name: string; message?: string; file?: string }[];
  /**
   * Every test the runner reported by name, when its output lists every test it counted
   * (node:test, mocha's spec reporter, cargo; jest `--verbose`, vitest `--reporter=verbose`,
   * pytest `-v`, go `-v`); absent when the runner prints only counts or names only some.
   * Suites are not tests. `file` is where the runner says the test is defined, when it says.
   */
  names?: TestName[];
}

export interface TestName {
  /** With its suites: `suite > test`. */
  name: string;
  status: 'pass' | 'fail' | 'skip';
  file?: string;
}

export interface TypeErrorItem {
  file?: string;
  line?: number;
  /** With the compiler's code: `TS2322: Type 'string' is not assignable…`. */
  message: string;
}

export interface LintProblem {
  file?: string;
  line?: number;
  rule?: string;
  message: string;
  severity: 'error' | 'warning';
}

export type FindingSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export interface SecurityFinding {
  severity: FindingSeverity;
  title: string;
  /** Advisory (GHSA…) or rule id. */
  id?: string;
  package?: string;
  file?: string;
}

export interface ParsedGateOutput {
  tests?: TestCounts;
  typeErrors?: { count: number; errors: TypeErrorItem[] };
  lintProblems?: { errors: number; warnings: number; problems: LintProblem[] };
  /** `percent` is lines when the report has them; `source` says where the figure came from. */
  coverage?: { percent: number; source: string };
  security?: { findings: SecurityFinding[] };
}

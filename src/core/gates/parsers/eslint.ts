import type { LintProblem, ParsedGateOutput } from './types';
import { displayPath, embeddedJson, isRecord } from './text';

type LintResult = NonNullable<ParsedGateOutput['lintProblems']>;

const PROBLEM = /^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}([@\w][\w@/.-]*))?\s*$/;
const SUMMARY = /^✖ (\d+) problems? \((\d+) errors?, (\d+) warnings?\)/;

/** ESLint: `-f json` when the output holds its array, else the default stylish report. */
export function parseEslint(output: string, lines: readonly string[], cwd?: string): LintResult | undefined {
  return parseEslintJson(output, cwd) ?? parseStylish(lines, cwd);
}

/**
 * Stylish: a file header (the path, at the margin), then `line:col  severity  message  rule`
 * rows, and `✖ N problems (E errors, W warnings)` (summed when several runs print one).
 */
function parseStylish(lines: readonly string[], cwd?: string): LintResult | undefined {
  const problems: LintProblem[] = [];
  let file: string | undefined;
  let errors = 0;
  let warnings = 0;
  let summaries = 0;
  for (const line of lines) {
    const s = SUMMARY.exec(line.trim());
    if (s) {
      summaries++;
      errors += Number(s[2]);
      warnings += Number(s[3]);
      continue;
    }
    const p = PROBLEM.exec(line);
    if (p) {
      problems.push({ file, line: Number(p[1]), severity: p[3] as LintProblem['severity'], message: p[4].trim(), rule: p[5] });
      continue;
    }
    if (/^\S/.test(line) && !/^[✖✔]/.test(line)) file = displayPath(line.trim(), cwd);
  }
  if (summaries === 0 && problems.length === 0) return undefined;
  if (summaries === 0) {
    errors = problems.filter((p) => p.severity === 'error').length;
    warnings = problems.length - errors;
  }
  return { errors, warnings, problems };
}

/** `eslint -f json`: `[{ filePath, messages: [{ ruleId, severity: 1|2, message, line }], errorCount, warningCount }]`. */
function parseEslintJson(output: string, cwd?: string): LintResult | undefined {
  let result: LintResult | undefined;
  for (const value of embeddedJson(output)) {
    if (!Array.isArray(value) || !value.every((r) => isRecord(r) && typeof r.filePath === 'string' && Array.isArray(r.messages))) continue;
    if (value.length === 0) continue;
    result ??= { errors: 0, warnings: 0, problems: [] };
    for (const entry of value as Record<string, unknown>[]) {
      const file = displayPath(entry.filePath as string, cwd);
      const before = result.problems.length;
      for (const m of entry.messages as unknown[]) {
        if (!isRecord(m)) continue;
        result.problems.push({
          file,
          line: typeof m.line === 'number' ? m.line : undefined,
          rule: typeof m.ruleId === 'string' ? m.ruleId : undefined,
          message: String(m.message ?? ''),
          severity: m.severity === 2 ? 'error' : 'warning',
        });
      }
      const mine = result.problems.slice(before);
      const errors = mine.filter((p) => p.severity === 'error').length;
      result.errors += typeof entry.errorCount === 'number' ? entry.errorCount : errors;
      result.warnings += typeof entry.warningCount === 'number' ? entry.warningCount : mine.length - errors;
    }
  }
  return result;
}

import type { GateConfig } from '../config/schema';
import type { ParsedGateOutput } from './parsers/types';
import { uncaughtError } from './parsers/uncaught';
import type { FixItem, GateOutcome, GateReport, GateRunResult, SecuritySeverity } from './types';

/** Coverage gates without a threshold use this (percent of lines). */
export const DEFAULT_COVERAGE_THRESHOLD = 80;
const MAX_ITEMS_PER_GATE = 20;
/** What of a gate's output may reach the model (the full log is on disk): per line, per fix item, per output tail. */
const LINE_CUT = '… [line cut]';
export const GATE_TEXT_LIMITS = { lineChars: 400, itemChars: 1500, tailChars: 4000 } as const;
const SEVERITY_RANK: Record<SecuritySeverity, number> = { critical: 4, high: 3, medium: 2, low: 1, info: 0 };

/**
 * Turns a gate run and its parsed output into a verdict. Exit codes decide when the
 * parsers found nothing; counts decide when they did (a runner that exits 0 with failing
 * tests still fails).
 */
export function evaluateGate(gate: GateConfig, run: GateRunResult, parsed: ParsedGateOutput): GateOutcome {
  const base = {
    name: gate.name,
    kind: gate.kind,
    required: gate.required,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    parsed,
  };
  if (run.timedOut || run.aborted) {
    const why = run.timedOut ? `timed out after ${Math.round(run.durationMs / 1000)}s` : 'was stopped';
    return {
      ...base,
      passed: false,
      summary: `${gate.name} ${why}`,
      fixItems: run.timedOut ? [item(gate, 'error', `\`${gate.command}\` ${why}`)] : [],
      outputTail: tail(run.output),
    };
  }
  const exitOk = run.exitCode === 0;
  switch (gate.kind) {
    case 'tests':
      return { ...base, ...testsVerdict(gate, exitOk, parsed, run) };
    case 'types':
      return { ...base, ...typesVerdict(gate, exitOk, parsed, run) };
    case 'lint':
      return { ...base, ...lintVerdict(gate, exitOk, parsed, run) };
    case 'coverage':
      return { ...base, ...coverageVerdict(gate, exitOk, parsed, run) };
    case 'security':
      return { ...base, ...securityVerdict(gate, parsed) };
    case 'custom':
      return {
        ...base,
        passed: exitOk,
        summary: exitOk ? 'passed' : `exit code ${run.exitCode}`,
        fixItems: exitOk
          ? []
          : [item(gate, 'error', `\`${gate.command}\` failed with exit code ${run.exitCode}:\n${tail(run.output, 15)}`)],
        outputTail: exitOk ? undefined : tail(run.output),
      };
  }
}

type Verdict = Pick<GateOutcome, 'passed' | 'summary' | 'fixItems' | 'worstSeverity' | 'outputTail'>;

function testsVerdict(gate: GateConfig, exitOk: boolean, parsed: ParsedGateOutput, run: GateRunResult): Verdict {
  const tests = parsed.tests;
  if (!tests) {
    return exitOk
      ? { passed: true, summary: 'passed (no test counts found in the output)', fixItems: [] }
      : {
          passed: false,
          // said wherever the gate is shown, as for a pass: the exit code alone decided (issue 47)
          summary: `failed with exit code ${run.exitCode} (no test counts found in the output)`,
          fixItems: [item(gate, 'error', unreadFailure(gate, run))],
          outputTail: tail(run.output),
        };
  }
  const passed = exitOk && tests.failed === 0;
  const summary = `${tests.passed}/${tests.total} tests passing${tests.failed ? `, ${tests.failed} failing` : ''}`;
  const fixItems = tests.failures
    .slice(0, MAX_ITEMS_PER_GATE)
    .map((f) => item(gate, 'error', `failing test: ${f.name}${f.message ? `\n${indent(firstLines(f.message, 6))}` : ''}`));
  if (!passed && fixItems.length === 0)
    fixItems.push(
      item(gate, 'error', `\`${gate.command}\` failed (exit code ${run.exitCode}, ${tests.failed} failing):\n${tail(run.output, 15)}`),
    );
  return { passed, summary, fixItems, outputTail: passed ? undefined : tail(run.output) };
}

/**
 * A failed run whose output was not read: the error the process ended with (Node's report of an
 * uncaught one: what failed and where), then the output's last lines — which, for such a
 * report, are only the error's fields and Node's own frames.
 */
function unreadFailure(gate: GateConfig, run: GateRunResult): string {
  const thrown = uncaughtError(run.output);
  const ended = thrown ? `, ending with:\n${indent(thrown)}\nThe output's last lines` : '';
  return `\`${gate.command}\` failed (exit code ${run.exitCode})${ended}:\n${tail(run.output, 15)}`;
}

function typesVerdict(gate: GateConfig, exitOk: boolean, parsed: ParsedGateOutput, run: GateRunResult): Verdict {
  const count = parsed.typeErrors?.count ?? (exitOk ? 0 : undefined);
  const passed = exitOk && (count ?? 0) === 0;
  const fixItems = (parsed.typeErrors?.errors ?? [])
    .slice(0, MAX_ITEMS_PER_GATE)
    .map((e) => item(gate, 'error', `type error ${location(e)}${e.message}`));
  if (!passed && fixItems.length === 0) fixItems.push(item(gate, 'error', `\`${gate.command}\` failed:\n${tail(run.output, 15)}`));
  return {
    passed,
    summary:
      count === undefined
        ? `failed with exit code ${run.exitCode}`
        : count === 0
          ? 'no type errors'
          : `${count} type error${count === 1 ? '' : 's'}`,
    fixItems,
  };
}

function lintVerdict(gate: GateConfig, exitOk: boolean, parsed: ParsedGateOutput, run: GateRunResult): Verdict {
  const lint = parsed.lintProblems;
  const errors = lint?.errors ?? (exitOk ? 0 : undefined);
  const passed = exitOk && (errors ?? 0) === 0;
  const fixItems = (lint?.problems ?? [])
    .filter((p) => p.severity === 'error' || passed === false)
    .slice(0, MAX_ITEMS_PER_GATE)
    .map((p) =>
      item(
        gate,
        p.severity === 'error' ? 'error' : 'warning',
        `lint ${p.severity} ${location(p)}${p.message}${p.rule ? ` (${p.rule})` : ''}`,
      ),
    );
  if (!passed && fixItems.length === 0) fixItems.push(item(gate, 'error', `\`${gate.command}\` failed:\n${tail(run.output, 15)}`));
  const summary =
    errors === undefined
      ? `failed with exit code ${run.exitCode}`
      : `${errors} lint error${errors === 1 ? '' : 's'}, ${lint?.warnings ?? 0} warning${lint?.warnings === 1 ? '' : 's'}`;
  return { passed, summary, fixItems };
}

function coverageVerdict(gate: GateConfig, exitOk: boolean, parsed: ParsedGateOutput, run: GateRunResult): Verdict {
  const threshold = gate.threshold ?? DEFAULT_COVERAGE_THRESHOLD;
  const percent = parsed.coverage?.percent;
  if (percent === undefined) {
    return {
      passed: false,
      summary: exitOk ? 'no coverage figure found in the output' : `failed with exit code ${run.exitCode}`,
      fixItems: [item(gate, 'warning', `\`${gate.command}\` gave no coverage figure:\n${tail(run.output, 10)}`)],
    };
  }
  const passed = percent >= threshold;
  const summary = `${round(percent)}% coverage (threshold ${threshold}%)`;
  return {
    passed,
    summary,
    fixItems: passed
      ? []
      : [item(gate, 'warning', `coverage is ${round(percent)}%, below the ${threshold}% threshold: add tests for the uncovered code`)],
  };
}

function securityVerdict(gate: GateConfig, parsed: ParsedGateOutput): Verdict {
  const findings = parsed.security?.findings ?? [];
  const worst = findings.reduce<SecuritySeverity | undefined>(
    (w, f) => (!w || SEVERITY_RANK[f.severity] > SEVERITY_RANK[w] ? f.severity : w),
    undefined,
  );
  const bySeverity = (s: SecuritySeverity) => findings.filter((f) => f.severity === s).length;
  const fixItems: FixItem[] = findings
    .slice()
    .sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity])
    .slice(0, MAX_ITEMS_PER_GATE)
    .map((f) => {
      const level: FixItem['level'] =
        f.severity === 'critical' || f.severity === 'high' ? 'error' : f.severity === 'medium' ? 'warning' : 'observation';
      const where = [f.package, f.file].filter(Boolean).join(' ');
      return item(gate, level, `${f.severity} security finding${where ? ` in ${where}` : ''}: ${f.title}${f.id ? ` (${f.id})` : ''}`);
    });
  const counts = (['critical', 'high', 'medium', 'low'] as const).filter((s) => bySeverity(s) > 0).map((s) => `${bySeverity(s)} ${s}`);
  return {
    passed: worst !== 'critical' && worst !== 'high',
    summary: counts.length ? `findings: ${counts.join(', ')}` : 'no findings',
    fixItems,
    worstSeverity: worst,
  };
}

/** Combines an iteration's gate outcomes into what the completion policy needs. */
export function summarizeGates(outcomes: GateOutcome[]): GateReport {
  return {
    outcomes,
    requiredPassed: outcomes.every((o) => !o.required || o.passed),
    optionalFailed: outcomes.filter((o) => !o.required && !o.passed).map((o) => o.name),
    critical: outcomes.some((o) => o.worstSeverity === 'critical'),
    high: outcomes.some((o) => o.worstSeverity === 'high'),
  };
}

function item(gate: GateConfig, level: FixItem['level'], text: string): FixItem {
  return { gate: gate.name, kind: gate.kind, level, text: capText(text, GATE_TEXT_LIMITS.itemChars) };
}

/**
 * Each line cut at the line limit, the whole to `maxChars`: its start (a fix item leads with
 * what failed) or its end (an output tail). Only a bounded window is split into lines, so a
 * 50 MB log costs no more than a short one.
 */
export function capText(
  text: string,
  maxChars: number,
  keep: 'start' | 'end' = 'start',
  lineChars: number = GATE_TEXT_LIMITS.lineChars,
): string {
  const span = maxChars * 4;
  const window = text.length <= span ? text : keep === 'start' ? text.slice(0, span) : text.slice(-span);
  let cut = window.length < text.length;
  let out = window
    .split('\n')
    .map((l) => (l.length > lineChars && !l.endsWith(LINE_CUT) ? `${l.slice(0, lineChars)}${LINE_CUT}` : l))
    .join('\n');
  if (out.length > maxChars) {
    out = keep === 'start' ? out.slice(0, maxChars) : out.slice(-maxChars);
    cut = true;
  }
  if (!cut) return out;
  return keep === 'start' ? `${out} … [cut]` : `[cut] … ${out}`;
}

function location(p: { file?: string; line?: number }): string {
  if (!p.file) return '';
  return `${p.file}${p.line ? `:${p.line}` : ''}: `;
}

export function tail(text: string, lines = 30): string {
  const end = text.trimEnd();
  // The last lines of a bounded window: a 50 MB single-line log costs no more than a short one.
  const window = end.length > GATE_TEXT_LIMITS.tailChars * 4 ? end.slice(-GATE_TEXT_LIMITS.tailChars * 4) : end;
  return capText(window.split('\n').slice(-lines).join('\n'), GATE_TEXT_LIMITS.tailChars, 'end');
}

function firstLines(text: string, lines: number): string {
  return text
    .slice(0, GATE_TEXT_LIMITS.itemChars * 2)
    .trim()
    .split('\n')
    .slice(0, lines)
    .join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

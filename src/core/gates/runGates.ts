import * as path from 'node:path';
import type { GateConfig } from '../config/schema';
import { errorMessage } from '../errors';
import type { RalphEventBody } from '../events';
import type { CommandRequest, CommandRunner } from '../commands/processRunner';
import { evaluateGate, summarizeGates } from './evaluate';
import { GateLog } from './gateLog';
import { parseGateOutput } from './parsers';
import { liftedTimeout } from './liftTimeout';
import { readRunnerSetting } from './runnerSetting';
import { clearReport, readReport, reportDirs, reportNote } from './reportFile';
import { runAgain, timeoutsOnly, withFlaky } from './rerun';
import { withTestLocations } from './testLocations';
import { type GateScope, scopedSummary } from './affectedTests';
import type { FixItem, GateOutcome, GateReport, GateRunner, GateRunRequest, GateRunResult } from './types';
import type { FailureVerdict } from './verdictEvidence';

/**
 * A gate's output kept for its verdict (its head and tail past that): large enough for a real
 * suite's whole report (node-semver's tap suite prints 1.2 MB), so that the test inventory and
 * every failure are read from all of it.
 */
export const GATE_OUTPUT_CHARS = 4_000_000;

/** Gates without their own timeout get this long. */
export const DEFAULT_GATE_TIMEOUT_MS = 10 * 60_000;

export interface RunGatesOptions {
  gates: readonly GateConfig[];
  runner: GateRunner;
  cwd: string;
  signal?: AbortSignal;
  /** Set when the gates run for a task's iteration (events carry them). */
  taskId?: string;
  iteration?: number;
  emit?(body: RalphEventBody): void;
  /** Judges each outcome against the task's base before it is announced (gate integrity). */
  judge?(gate: GateConfig, outcome: GateOutcome): Promise<GateOutcome>;
  /** What the agent is told besides of each outcome, parts included, after the judge (a base run still going). */
  remark?(gate: GateConfig, outcome: GateOutcome): GateOutcome;
  /** Folder for the full output of each gate (`iteration-<n>-<gate>.log`); none is kept when unset. */
  logDir?: string;
  /** Cap of each log (its head and tail are kept); default 1 MiB. */
  logMaxBytes?: number;
  /** Whether an earlier run on the same clean tree may stand for the first run of each gate (`GateRunRequest.reuse`); re-runs never reuse. */
  reuse?: GateRunRequest['reuse'];
  /**
   * Looks at a failed run for a cause no change of the agent fixes (gates/environmentFault.ts):
   * the sentence to say, kept as the outcome's `environment`. Given for a task's first gate run.
   */
  diagnose?(gate: GateConfig, outcome: GateOutcome, output: string): Promise<string | undefined>;
  /**
   * Which tests each test gate runs (`gates/affectedTests.ts`), by gate name: a part of the
   * suite is run by its own command, never judged against the base (integrity and verdicts are
   * judged on whole runs), and marked as a part in its outcome, its events and its summary.
   */
  scopes?: ReadonlyMap<string, GateScope>;
}

/** Runs every gate in order (all of them, so the feedback is complete) and judges the lot. */
export async function runGates(options: RunGatesOptions): Promise<GateReport> {
  const outcomes: GateOutcome[] = [];
  for (const gate of options.gates) {
    if (options.signal?.aborted) break;
    const { runs, evaluated } = await runWithReruns(gate, options);
    const ranPart = evaluated.scope?.kind === 'affected';
    // a part of the suite is never judged against the base: its missing tests did not run, they are not gone
    const judged = options.judge && !ranPart ? await options.judge(gate, evaluated) : evaluated;
    const outcome = options.remark ? options.remark(gate, judged) : judged;
    outcomes.push(outcome);
    options.emit?.({
      type: 'gate.finished',
      taskId: options.taskId,
      iteration: options.iteration,
      gate: gate.name,
      kind: gate.kind,
      required: gate.required,
      passed: outcome.passed,
      summary: outcome.summary,
      durationMs: runs.reduce((sum, r) => sum + r.durationMs, 0),
      tests: outcome.parsed.tests
        ? {
            passed: outcome.parsed.tests.passed,
            failed: outcome.parsed.tests.failed,
            total: outcome.parsed.tests.total,
            failing: outcome.parsed.tests.failures.slice(0, 20).map((f) => f.name.slice(0, 300)),
          }
        : undefined,
      severity: outcome.worstSeverity,
      integrity: outcome.integrity,
      ...(outcome.preExisting?.length ? { preExisting: outcome.preExisting.slice(0, 20).map((n) => n.slice(0, 300)) } : {}),
      ...(outcome.baseFailures?.length ? { baseFailures: boundedBaseFailures(outcome.baseFailures, 20) } : {}),
      ...(outcome.flaky?.length ? { flaky: outcome.flaky.slice(0, 20).map((n) => n.slice(0, 300)) } : {}),
      ...(outcome.baselineNote ? { baselineNote: outcome.baselineNote } : {}),
      ...(outcome.scope ? { scope: eventScope(outcome.scope) } : {}),
    });
  }
  return summarizeGates(outcomes);
}

/**
 * A gate's runs up to its verdict: the first; the whole suite again when a part failed oddly;
 * re-runs on failed tests (`gates[].rerunFailures`) or once on timeouts only, that one with the
 * runner's timeout lifted where Ralph knows its flag (`liftTimeout.ts`).
 */
async function runWithReruns(gate: GateConfig, options: RunGatesOptions): Promise<{ runs: GateOutcome[]; evaluated: GateOutcome }> {
  let scope = options.scopes?.get(gate.name);
  emitStarted(gate, options, scope);
  const runs = [await runGateOnce(gate, options, 0, scope)];
  if (scope?.kind === 'affected' && partFailedOddly(runs[0]) && !options.signal?.aborted) {
    // the narrowed command itself may be what failed (a flag this runner's version does not take): the whole suite says
    scope = { kind: 'full', why: `the part's run (\`${scope.command}\`) failed without naming a failing test, so the whole suite ran` };
    emitStarted(gate, options, scope);
    runs[0] = await runGateOnce(gate, options, 0, scope);
  }
  const onTimeouts = timeoutsOnly(runs[0]);
  let again = { gate, scope };
  let why =
    onTimeouts && !gate.rerunFailures
      ? "only timeouts failed: one more run, since a busy machine's load trips a runner's timeout"
      : undefined;
  if (onTimeouts && !options.signal?.aborted) {
    const part = scope?.kind === 'affected' ? scope : undefined;
    const lifted = liftedTimeout(gate.command, part?.command ?? gate.command, runs[0], await readRunnerSetting(options.cwd));
    if (lifted) {
      again = part ? { gate, scope: { ...part, command: lifted.command } } : { gate: { ...gate, command: lifted.command }, scope };
      const how = `the runner's timeout lifted to ${lifted.ms / 1000} s (\`${lifted.command}\`)`;
      why = gate.rerunFailures
        ? `gates[].rerunFailures, ${how}`
        : `only timeouts failed: one more run with ${how}, since a busy machine's load trips a runner's timeout`;
    }
  }
  while (runAgain(gate.rerunFailures, runs[runs.length - 1], runs.length - 1) && !options.signal?.aborted)
    runs.push(await runGateOnce(again.gate, options, runs.length, again.scope));
  const evaluated = runs.length > 1 ? withFlaky(runs[runs.length - 1], runs.slice(0, -1), runs.length - 1, why) : runs[0];
  return { runs, evaluated };
}

/** What events and records keep of a gate's verdicts against the base: the first `max`, names and evidence shortened. */
export function boundedBaseFailures(list: readonly FailureVerdict[], max: number): FailureVerdict[] {
  return list.slice(0, max).map((v) => ({ name: v.name.slice(0, 300), held: v.held, why: v.why.slice(0, 500) }));
}

function emitStarted(gate: GateConfig, options: RunGatesOptions, scope: GateScope | undefined): void {
  const part = scope?.kind === 'affected' ? scope : undefined;
  options.emit?.({
    type: 'gate.started',
    taskId: options.taskId,
    iteration: options.iteration,
    gate: gate.name,
    kind: gate.kind,
    command: part?.command ?? gate.command,
    ...(part ? { scope: 'affected' as const } : {}),
  });
}

/** A part that failed with no failing test to show for it: not stopped, not timed out, nothing parsed as failing. */
function partFailedOddly(outcome: GateOutcome): boolean {
  return !outcome.passed && !outcome.timedOut && outcome.exitCode !== null && (outcome.parsed.tests?.failures.length ?? 0) === 0;
}

/** What a gate's events say of its scope: a part's files counted, a whole run's reason. */
function eventScope(scope: GateScope): { kind: 'affected'; files: number; of?: number } | { kind: 'full'; why: string } {
  return scope.kind === 'affected'
    ? { kind: 'affected', files: scope.files.length, ...(scope.of !== undefined ? { of: scope.of } : {}) }
    : { kind: 'full', why: scope.why.slice(0, 500) };
}

/**
 * One run of a gate's command, evaluated; `attempt` > 0 is a re-run (its log is kept beside the
 * first). With an `affected` scope its command runs the affected tests only — unless a finished
 * run of the whole suite on this tree stands for it (the outcome then says whole).
 */
async function runGateOnce(gate: GateConfig, options: RunGatesOptions, attempt: number, asked?: GateScope): Promise<GateOutcome> {
  const part = asked?.kind === 'affected' ? asked : undefined;
  let run: GateRunResult;
  const log = options.logDir
    ? await GateLog.open(options.logDir, options.iteration, attempt > 0 ? `${gate.name}-rerun${attempt}` : gate.name, options.logMaxBytes)
    : undefined;
  // a report file counts only when this run wrote it: removed now, read after (gates/reportFile.ts)
  const cleared = await clearReport(gate, options.cwd);
  const writableDirs = await reportDirs(gate, options.cwd);
  try {
    // an earlier run's result has no report of this run to go with it
    const reuse = attempt > 0 || gate.report ? 'none' : options.reuse;
    run = await options.runner.run({
      gate: part ? { ...gate, command: part.command } : gate,
      ...(part && attempt === 0 ? { whole: gate.command } : {}),
      cwd: options.cwd,
      timeoutMs: gate.timeoutMs ?? DEFAULT_GATE_TIMEOUT_MS,
      signal: options.signal,
      ...(reuse ? { reuse } : {}),
      ...(writableDirs ? { writableDirs } : {}),
      ...(options.taskId ? { taskId: options.taskId } : {}),
      ...(log ? { onOutput: (chunk: string) => log.write(chunk) } : {}),
    });
  } catch (error) {
    run = {
      exitCode: null,
      timedOut: false,
      aborted: false,
      output: `could not run \`${gate.command}\`: ${errorMessage(error)}`,
      durationMs: 0,
    };
  }
  const logPath = await log?.close(run.output);
  const parsed = parseGateOutput(gate.kind, run.output, { cwd: options.cwd });
  const report = await readReport(gate, options.cwd, cleared);
  // a gate with a report is read from it alone: a console line never stands in for a report that is not there
  if (gate.report) parsed.tests = report.tests;
  if (!parsed.tests) delete parsed.tests;
  if (parsed.tests && run.testLocations) parsed.tests = withTestLocations(parsed.tests, run.testLocations);
  const evaluated = evaluateGate(gate, run, parsed);
  if (report.notRead) withReportNote(evaluated, gate, report.notRead);
  const scope = scopeOfRun(asked, run);
  if (scope) {
    evaluated.scope = scope;
    evaluated.summary = scopedSummary(evaluated.summary, scope, parsed.tests?.total);
    if (scope.kind === 'affected') evaluated.fixItems.push(partNote(gate, scope), ...redAgainNote(gate, scope, evaluated));
  }
  if (run.reused)
    evaluated.summary = `${evaluated.summary} (taken from an earlier run on the same tree${run.otherRun ? `, made by another ralph run (RALPH_GATE_RUNS_DIR)` : ''})`;
  if (logPath) {
    evaluated.logPath = logPath;
    // Where the rest is: the model (and the human reading the feedback) only gets an excerpt.
    const where = gateLogPointer(gate.name, options.cwd, logPath);
    evaluated.fixItems = evaluated.fixItems.map((f, i) => (i === 0 ? { ...f, text: `${f.text}\n(${where})` } : f));
  }
  if (options.diagnose && !evaluated.passed && !run.aborted && !run.timedOut) {
    const environment = await options.diagnose(gate, evaluated, run.output).catch(() => undefined);
    if (environment) evaluated.environment = environment;
  }
  return evaluated;
}

/** A report that was not read, said in the gate's summary and to the agent. */
function withReportNote(outcome: GateOutcome, gate: GateConfig, notRead: string): void {
  const note = reportNote(notRead);
  outcome.summary = `${outcome.summary.replace(/ \(no test counts found in the output\)$/, '')} (${note})`;
  outcome.fixItems.push({ gate: gate.name, kind: gate.kind, level: 'observation', text: `${gate.name}: ${note}.` });
}

/** The scope a run had: as asked, or whole when the whole suite's run stood for the part. */
function scopeOfRun(asked: GateScope | undefined, run: GateRunResult): GateScope | undefined {
  if (asked?.kind === 'affected' && run.whole)
    return { kind: 'full', why: "the agent's own run of the whole suite on this tree stands for the affected tests" };
  return asked;
}

/** What the agent is told of a part: which tests ran, and that the whole suite decides. */
function partNote(gate: GateConfig, scope: Extract<GateScope, { kind: 'affected' }>): FixItem {
  const shown = scope.files.slice(0, 8).join(', ');
  const more = scope.files.length > 8 ? ` and ${scope.files.length - 8} more` : '';
  const what =
    scope.runner === 'jest' ? `the tests jest relates to ${shown}${more}` : `the test files that reach your changes (${shown}${more})`;
  return {
    gate: gate.name,
    kind: gate.kind,
    level: 'observation',
    text: `${gate.name} ran only ${what}, not the whole suite; the whole suite runs and decides when you signal COMPLETE.`,
  };
}

/** What the agent is told of a part's failures that failed at the task's base as well: the whole run at COMPLETE judges them. */
function redAgainNote(gate: GateConfig, scope: Extract<GateScope, { kind: 'affected' }>, outcome: GateOutcome): FixItem[] {
  const red = new Set(scope.redAtBase ?? []);
  const again = (outcome.parsed.tests?.failures ?? []).map((f) => f.name).filter((n) => red.has(n));
  if (again.length === 0) return [];
  const shown =
    again
      .slice(0, 5)
      .map((n) => `\`${n}\``)
      .join(', ') + (again.length > 5 ? ` and ${again.length - 5} more` : '');
  return [
    {
      gate: gate.name,
      kind: gate.kind,
      level: 'observation',
      text: `${shown} failed at the task's base too; the whole suite at COMPLETE judges from its evidence whether ${again.length === 1 ? 'it is' : 'they are'} this task's to fix.`,
    },
  ];
}

/**
 * Where a gate's full log is, said so the agent can open it: relative to its working folder when
 * the log is inside it; otherwise (a parallel task's worktree, whose reports stay in the main
 * workspace, out of read_file's reach) the absolute path and a command that reads it.
 */
export function gateLogPointer(gate: string, cwd: string, logPath: string): string {
  const rel = path.relative(cwd, logPath);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return `full output of ${gate}: ${rel}`;
  return `full output of ${gate}: ${logPath} — outside your working folder; read it with run_command, e.g. \`tail -n 200 '${logPath}'\``;
}

export type RunEnvironment = Pick<GateRunRequest, 'env' | 'appendEnv' | 'writableDirs'>;

/** What a gate run adds to its command's environment and sandbox (the test probe's variables and folder). */
export function runEnvironment(request: Pick<GateRunRequest, 'env' | 'appendEnv' | 'writableDirs'>): RunEnvironment {
  return {
    ...(request.env ? { env: request.env } : {}),
    ...(request.appendEnv ? { appendEnv: request.appendEnv } : {}),
    ...(request.writableDirs ? { writableDirs: request.writableDirs } : {}),
  };
}

/** The CLI's gate runner: the gate's command in a child process, its whole tree killed on timeout. */
export class ProcessGateRunner implements GateRunner {
  constructor(private readonly commands: CommandRunner) {}

  async run(request: GateRunRequest): Promise<GateRunResult> {
    const result = await this.commands.run(gateCommand(request));
    return {
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      aborted: result.aborted,
      output: result.output,
      durationMs: result.durationMs,
    };
  }

  async environment(request: GateRunRequest): Promise<string | undefined> {
    return this.commands.environmentOf?.(gateCommand(request));
  }
}

/** The command a gate's run is: its whole output kept up to 400,000 characters. */
export function gateCommand(request: GateRunRequest): CommandRequest {
  return {
    command: request.gate.command,
    cwd: request.cwd,
    timeoutMs: request.timeoutMs,
    maxOutputChars: GATE_OUTPUT_CHARS,
    signal: request.signal,
    onOutput: request.onOutput,
    purpose: 'gate',
    ...runEnvironment(request),
  };
}

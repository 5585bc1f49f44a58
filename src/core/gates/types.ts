import type { GateConfig } from '../config/schema';
import type { ParsedGateOutput } from './parsers/types';
import type { FailureVerdict } from './verdictEvidence';
import type { GateScope } from './affectedTests';

export type GateKind = GateConfig['kind'];

/** What running a gate's command produced, before interpretation. */
export interface GateRunResult {
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  output: string;
  durationMs: number;
  /** Taken from an earlier run of the same command on the same tree, in the same environment, in this run (`loop/run/gateRunCache.ts`): nothing ran now. */
  reused?: boolean;
  /** Taken from a run another run made (`RALPH_GATE_RUNS_DIR`, `loop/run/sharedGateRuns.ts`); with `reused`. */
  otherRun?: boolean;
  /** The run of the gate's whole suite on this tree (`GateRunRequest.whole`) taken for the part asked. */
  whole?: boolean;
  /**
   * Where each test is defined, as the test runner itself said it to the test probe
   * (`probe/probeRunner.ts`): names exactly as the output parser names them, files relative to
   * the run's cwd (absolute outside it); a name the runner put in two files is left out.
   */
  testLocations?: TestLocation[];
}

export interface TestLocation {
  name: string;
  file: string;
}

export interface GateRunRequest {
  gate: GateConfig;
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Live output, for terminals and panels. */
  onOutput?: (chunk: string) => void;
  /**
   * Whether an earlier run of the same command on the same tree in the same environment may
   * stand for this one (the run's gate cache): `passing` (default) a passing result only, `any`
   * a failing one too (a run that learns what is red at a base), `none` never (a re-run of a
   * failed gate).
   */
  reuse?: 'passing' | 'any' | 'none';
  /** Variables of this run only, over the gate's environment (Ralph's own, `RALPH_RUN_ENV`: the test probe's folder). */
  env?: Record<string, string>;
  /** Appended (after a space) to the variable's value in the command's final environment: the test probe's `--require` to NODE_OPTIONS. */
  appendEnv?: Record<string, string>;
  /** Folders the command may write, inside the sandbox too (the test probe's records). */
  writableDirs?: string[];
  /**
   * The command of the gate's whole suite when `gate.command` runs a part of it (issue 34): a
   * finished run of the whole command on the same tree, in the same environment, stands for the
   * part (the agent's own `npm test`), and says so (`GateRunResult.whole`).
   */
  whole?: string;
  /** The task the run is for (its gates, its agent's own run of a gate's command): a failing result it made itself is its to take again. */
  taskId?: string;
}

/**
 * The port through which the loop runs a gate: the VS Code Tasks API in the extension
 * (visible in the terminal panel), a child process in the CLI.
 */
export interface GateRunner {
  run(request: GateRunRequest): Promise<GateRunResult>;
  /**
   * What a run of `request` would see besides its command and its tree: its environment, its
   * sandbox, its shell (`CommandRunner.environmentOf`). Runs are shared only between requests
   * whose environments are equal; a runner that cannot say (undefined, or no such method) has
   * its runs never shared.
   */
  environment?(request: GateRunRequest): Promise<string | undefined>;
}

export type SecuritySeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** One thing the agent must fix (or know about) in its next iteration. */
export interface FixItem {
  gate: string;
  kind: GateKind;
  /** `error` items block completion when the gate is required; `observation`s never do. */
  level: 'error' | 'warning' | 'observation';
  text: string;
}

/** A gate's verdict: the run, its parsed numbers and what follows from them. */
export interface GateOutcome {
  name: string;
  kind: GateKind;
  required: boolean;
  passed: boolean;
  /** One line for reports, the timeline and the tree: `4/6 tests passing`, `2 type errors`. */
  summary: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  parsed: ParsedGateOutput;
  fixItems: FixItem[];
  /** The highest security severity found, when the gate reads findings. */
  worstSeverity?: SecuritySeverity;
  /** The last lines of output when the parsers found nothing to go on. */
  outputTail?: string;
  /**
   * Set when the gate was judged against the task's base and something changed: `violations`
   * failed it; `allowed` are the changes the task was allowed to make (the reports list them).
   */
  integrity?: { violations: string[]; allowed: string[]; gone?: string[] };
  /** Why the gate cannot run where it ran, whatever the agent changes (gates/environmentFault.ts): the whole sentence, with the setting to use. */
  environment?: string;
  /** The gate's full output on disk (`.ralph/reports/<taskId>/gates/iteration-<n>-<gate>.log`). */
  logPath?: string;
  /** Times the gate ran again after failing on tests (`gates[].rerunFailures`); the last run decided. */
  reruns?: number;
  /** Tests that failed in an earlier run of this gate and passed when it ran again. */
  flaky?: string[];
  /**
   * Failing tests that already failed at the task's base (or on the merge target's tip) and
   * that the evidence shows unrelated to the task (or a person declared so): not held against it.
   */
  preExisting?: string[];
  /** Every failing test that failed at the base too, held against the task or forgiven, with the evidence (`gates/verdictEvidence.ts`). */
  baseFailures?: FailureVerdict[];
  /** Whether the run was a part of the suite (the tests a change reaches) or the whole, and why whole when a part was asked for. */
  scope?: GateScope;
  /** Why failures could not be compared with the base (the output names no failing tests), when the gate was red there too. */
  baselineNote?: string;
}

/** All gates of one iteration. */
export interface GateReport {
  outcomes: GateOutcome[];
  requiredPassed: boolean;
  /** Optional gates that failed (they feed back but never block). */
  optionalFailed: string[];
  /** A critical security finding: the task halts. */
  critical: boolean;
  /** A high security finding: fixed first, and the model is escalated. */
  high: boolean;
}

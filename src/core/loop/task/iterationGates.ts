import * as path from 'node:path';
import type { IntegrityBaseline } from '../../gates/integrity';
import { boundedBaseFailures, runGates } from '../../gates/runGates';
import { gatesFor } from '../../gates/taskCheck';
import type { GateOutcome, GateReport } from '../../gates/types';
import type { GateConfig } from '../../config/schema';
import type { Checkpoint, IterationRecord } from '../../record/checkpoint';
import type { Signal } from '../../signals/types';
import type { Task } from '../../tasks/schema';
import { environmentDiagnosis, firstGateRun } from './environmentStop';
import { integrityJudge } from './integrityStep';
import { gateScopes } from './gateScopes';
import type { TaskLoopServices } from './types';

/** An iteration's gates: run after its commit, judged against the task's base, kept in its record. */

/** A gate's outcome as the iteration record keeps it. */
export function gateSummary(o: GateOutcome): IterationRecord['gates'][number] {
  return {
    name: o.name,
    kind: o.kind,
    required: o.required,
    passed: o.passed,
    summary: o.summary,
    ...(o.integrity ? { integrity: o.integrity } : {}),
    ...(o.preExisting?.length ? { preExisting: o.preExisting.slice(0, 50) } : {}),
    ...(o.baseFailures?.length ? { baseFailures: boundedBaseFailures(o.baseFailures, 50) } : {}),
    ...(o.flaky?.length ? { flaky: o.flaky.slice(0, 50) } : {}),
    ...(o.scope?.kind === 'affected' ? { scope: 'affected' as const } : {}),
    ...(o.parsed.tests?.failures.length ? { failing: failingFilesOf(o.parsed.tests.failures) } : {}),
  };
}

/** Where the failing tests are, for the next part of the suite to run them again (files bounded at 200). */
function failingFilesOf(failures: readonly { file?: string }[]): { files: string[]; unfiled: number } {
  const files = [...new Set(failures.flatMap((f) => (f.file ? [f.file] : [])))];
  return { files: files.slice(0, 200), unfiled: failures.filter((f) => !f.file).length + Math.max(0, files.length - 200) };
}

type GateJudge = NonNullable<Parameters<typeof runGates>[0]['judge']>;

/** BLOCKED and NEEDS_HELP end the task whatever the gates say. */
export function isFinalSignal(signal: Signal | undefined): boolean {
  return signal?.kind === 'BLOCKED' || signal?.kind === 'NEEDS_HELP';
}

function isComplete(signal: Signal | undefined): boolean {
  return signal?.kind === 'COMPLETE';
}

/** BLOCKED and NEEDS_HELP end the task whatever the gates say, so they are not run then. */
export async function runGatesUnlessFinal(
  services: TaskLoopServices,
  task: Task,
  cp: Checkpoint,
  n: number,
  signal: Signal | undefined,
  abort: AbortSignal,
  aside?: Promise<IntegrityBaseline | undefined>,
  /** The task's run at its base, still going: parts are picked without it, whole runs wait for it to be judged. */
  running?: Promise<IntegrityBaseline | undefined>,
): Promise<GateReport | undefined> {
  const gates = gatesFor(task, services.config.gates);
  if (gates.length === 0) return undefined;
  if (isFinalSignal(signal)) return undefined;
  const against = (integrity: IntegrityBaseline) => integrityJudge(services, task, integrity, cp.baseCommit);
  const basePending = running !== undefined;
  const base = aside ?? running;
  // a whole run's verdict waits for the base run (a part is never judged, so it goes on without it)
  const later: GateJudge = async (gate, outcome) => {
    const integrity = await base;
    return integrity ? against(integrity)(gate, outcome) : outcome;
  };
  const judge = cp.integrity ? against(cp.integrity) : base && later;
  const cwd = (services.work ?? services.paths).workspace;
  // the conversation is over: while the gates (and the proof after them) run, the slot goes to the next task
  if (!services.config.loop.holdSlotDuringGates) services.slot?.release();
  // the base's suite, taken beside iteration 1 in a worktree: its verdicts wait for it anyway, and knowing it lets this run be a part
  const scoped = !isComplete(signal) && gates.some((g) => g.kind === 'tests' && g.scope !== 'full');
  const known = cp.integrity ?? (aside && scoped ? await aside : undefined);
  const scopes = await gateScopes(services, task, known ? { ...cp, integrity: known } : cp, gates, signal, basePending).catch(
    () => undefined,
  );
  return runGates({
    ...(scopes ? { scopes } : {}),
    gates,
    runner: services.gates,
    cwd,
    // the task's first run of its gates: a cause no change of the agent fixes is looked for
    ...(firstGateRun(cp) ? { diagnose: environmentDiagnosis(services, cwd) } : {}),
    signal: abort,
    taskId: task.id,
    iteration: n,
    emit: services.emit,
    judge,
    ...(basePending ? { remark: unjudgedPart } : {}),
    logDir: path.join(services.paths.reportsDir(task.id), 'gates'),
    logMaxBytes: services.config.reports.logMaxKb * 1024,
  });
}

/** A part picked while the task's run at its base was still going: the agent is told its failures are not compared with the base yet. */
function unjudgedPart(gate: GateConfig, outcome: GateOutcome): GateOutcome {
  if (outcome.passed || outcome.scope?.kind !== 'affected') return outcome;
  const text = `The task's run of ${gate.name} at its base was still going when this part was picked, so these failures are not compared with the base yet: one that was already there counts here. From the first iteration after that run ends, they are; a whole run and COMPLETE always wait for it.`;
  return { ...outcome, fixItems: [...outcome.fixItems, { gate: gate.name, kind: gate.kind, level: 'observation', text }] };
}

export function optionalIterationsLeft(services: TaskLoopServices, cp: Checkpoint, name: string): number {
  const gate = services.config.gates.find((g) => g.name === name);
  const allowed = gate?.maxIterations ?? 2;
  return allowed - (cp.optionalGateIterations[name] ?? 0);
}

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../config/schema';
import { definitionParts, readDefinition } from '../gates/definitions';
import { applyIntegrity, baselineOf, baselineParts, gateChangesAllowed, type GateBaseline, type IntegrityBaseline, judgeIntegrity } from '../gates/integrity';
import type { TestName } from '../gates/parsers/types';
import { runGates } from '../gates/runGates';
import type { GateOutcome } from '../gates/types';
import type { Task } from '../tasks/schema';
import { readTextIfExists } from '../util/atomicWrite';
import type { TaskLoopServices } from './types';

/** Kinds whose output carries a test inventory; the others are judged on their definition only. */
const RUN_AT_BASE: ReadonlySet<GateConfig['kind']> = new Set(['tests', 'coverage', 'custom']);

/**
 * Records what each required gate checks at the task's base, before iteration 1 (the working
 * tree is the base then): the definition parts of every required gate, and the test inventory
 * of those that run tests, from one run of them. Undefined when stopped midway (taken again
 * on the next start).
 */
export async function takeIntegrityBaseline(s: Pick<TaskLoopServices, 'config' | 'gates' | 'paths' | 'work' | 'clock' | 'emit'>, task: Task, stop: AbortSignal): Promise<IntegrityBaseline | undefined> {
  const workspace = (s.work ?? s.paths).workspace;
  // runners print real paths; the workspace may be reached through a symlink (macOS /var → /private/var)
  const roots = [...new Set([workspace, await fs.realpath(workspace).catch(() => workspace)])];
  const gates: GateBaseline[] = [];
  for (const gate of s.config.gates.filter((g) => g.required)) {
    const parts = await definitionParts(gate, workspace);
    const states = await readDefinition(parts, workspace);
    let tests;
    if (RUN_AT_BASE.has(gate.kind)) {
      const report = await runGates({ gates: [gate], runner: s.gates, cwd: workspace, signal: stop });
      if (stop.aborted || report.outcomes.length === 0) return undefined;
      tests = report.outcomes[0].parsed.tests;
    }
    const names = tests?.names?.map((t) => relativeName(t, workspace, roots));
    const failingSources: Record<string, string> = {};
    for (const file of new Set((names ?? []).filter((t) => t.status === 'fail' && t.file).map((t) => t.file!))) {
      const text = await readTextIfExists(path.join(workspace, file)).catch(() => undefined);
      if (text !== undefined) failingSources[file] = text;
    }
    gates.push(baselineOf(gate, tests && { ...tests, ...(names ? { names } : {}) }, parts, states, failingSources));
  }
  if (gates.length > 0) {
    s.emit({
      type: 'integrity.baseline',
      taskId: task.id,
      gates: gates.map((g) => ({
        gate: g.gate,
        ...(g.tests ? { tests: { total: g.tests.total, skipped: g.tests.skipped, named: g.tests.names?.length ?? 0 } } : {}),
        definition: Object.entries(g.definition).filter(([, d]) => d.hash !== null).map(([key]) => key),
      })),
    });
  }
  return { takenAt: new Date(s.clock.now()).toISOString(), gates };
}

/** Judges each required gate's outcome against its baseline (see `gates/integrity.ts`). */
export function integrityJudge(s: Pick<TaskLoopServices, 'paths' | 'work'>, task: Task, baseline: IntegrityBaseline): (gate: GateConfig, outcome: GateOutcome) => Promise<GateOutcome> {
  const workspace = (s.work ?? s.paths).workspace;
  return async (gate, outcome) => {
    const base = baseline.gates.find((g) => g.gate === gate.name);
    if (!gate.required || !base) return outcome;
    if (base.command !== gate.command) {
      // the configuration changed between runs (the agent cannot write it): nothing to compare the counts with
      return { ...outcome, integrity: { violations: [], allowed: [`the gate's command changed in the configuration since the task's base (\`${base.command}\` → \`${gate.command}\`); not compared with the base`] } };
    }
    const definition = await readDefinition(baselineParts(base), workspace);
    const sources: Record<string, string | undefined> = {};
    for (const file of Object.keys(base.failingSources)) sources[file] = await readTextIfExists(path.join(workspace, file)).catch(() => undefined);
    const completed = !outcome.timedOut && outcome.exitCode === 0;
    const judgement = judgeIntegrity(base, outcome.parsed.tests, definition, sources, { completed });
    return applyIntegrity(outcome, judgement, gateChangesAllowed(task.allowGateChanges, gate.name));
  };
}

/** Test locations as workspace-relative paths (the runner prints absolute ones); outside it, dropped. */
function relativeName(t: TestName, workspace: string, roots: readonly string[]): TestName {
  if (!t.file) return t;
  const file = path.resolve(workspace, t.file.startsWith('file://') ? new URL(t.file).pathname : t.file);
  const { file: _dropped, ...rest } = t;
  for (const root of roots) {
    const rel = path.relative(root, file).replace(/\\/g, '/');
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) return { ...rest, file: rel };
  }
  return rest;
}

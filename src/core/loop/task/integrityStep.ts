import * as path from 'node:path';
import type { GateConfig } from '../../config/schema';
import { definitionParts, readDefinition } from '../../gates/definitions';
import {
  applyIntegrity,
  baselineOf,
  baselineParts,
  gateChangesAllowed,
  type GateBaseline,
  goneAndAdded,
  type IntegrityBaseline,
  judgeIntegrity,
} from '../../gates/integrity';
import { findRenames, type Rename } from '../../gates/renames';
import { attributeToWholeFiles } from '../../gates/wholeFiles';
import { runGit } from '../../git/gitExec';
import { baseVerdictOf, type BaseVerdict, judgeAgainstBase, TASK_BASE } from '../../gates/baseVerdict';
import type { TestCounts, TestName } from '../../gates/parsers/types';
import { relativeFailure, relativeTests, rootsOf } from '../../gates/testLocations';
import { runGates } from '../../gates/runGates';
import { gatesFor } from '../../gates/taskCheck';
import type { GateOutcome } from '../../gates/types';
import type { Task } from '../../tasks/schema';
import { readTextIfExists } from '../../util/atomicWrite';
import { diffRuleApplies, diffRuleJudgement, diffRuleSummary } from '../../gates/diffRule';
import { readableHint } from '../../gates/readableHint';
import { readRunnerSetting } from '../../gates/runnerSetting';
import { diffRuleFindings } from './diffRuleStep';
import { emptiedGuards } from './emptiedGuards';
import { evidenceJudge, lazily, readTreeEvidence, verdictTask } from './taskEvidence';
import { environmentDiagnosis } from './environmentStop';
import type { TaskLoopServices } from './types';

/** Kinds whose output carries a test inventory; the others are judged on their definition only. */
export const RUN_AT_BASE: ReadonlySet<GateConfig['kind']> = new Set(['tests', 'coverage', 'custom']);

/**
 * Records what each required gate checks at the task's base, before iteration 1 (the working
 * tree is the base then): the definition parts of every required gate, and the test inventory
 * of those that run tests, from one run of them. Undefined when stopped midway (taken again
 * on the next start).
 */
export async function takeIntegrityBaseline(
  services: Pick<TaskLoopServices, 'config' | 'gates' | 'paths' | 'work' | 'clock' | 'emit'>,
  task: Task,
  stop: AbortSignal,
): Promise<IntegrityBaseline | undefined> {
  const workspace = (services.work ?? services.paths).workspace;
  // runners print real paths; the workspace may be reached through a symlink (macOS /var → /private/var)
  const roots = rootsOf(workspace);
  const gates: GateBaseline[] = [];
  for (const gate of gatesFor(task, services.config.gates).filter((g) => g.required)) {
    const parts = await definitionParts(gate, workspace);
    const states = await readDefinition(parts, workspace);
    let tests: TestCounts | undefined;
    let verdict: BaseVerdict | undefined;
    let environment: string | undefined;
    if (RUN_AT_BASE.has(gate.kind)) {
      const result = await runAtBase(services, gate, { workspace, roots, taskId: task.id }, stop);
      if (!result || stop.aborted) return undefined;
      ({ tests, verdict, environment } = result);
    }
    const names = tests?.names;
    const failingFiles = [
      ...(names ?? []).filter((t) => t.status === 'fail' && t.file).map((t) => t.file!),
      ...(verdict?.failing ?? []).flatMap((f) => (f.file ? [f.file] : [])),
    ];
    const failingSources: Record<string, string> = {};
    for (const file of new Set(failingFiles)) {
      const text = await readTextIfExists(path.join(workspace, file)).catch(() => undefined);
      if (text !== undefined) failingSources[file] = text;
    }
    gates.push({
      ...baselineOf(gate, tests, parts, states, failingSources),
      ...(verdict ? { verdict } : {}),
      ...(environment ? { environment } : {}),
    });
  }
  if (gates.length > 0) {
    services.emit({
      type: 'integrity.baseline',
      taskId: task.id,
      gates: gates.map((g) => ({
        gate: g.gate,
        ...(g.tests ? { tests: { total: g.tests.total, skipped: g.tests.skipped, named: g.tests.names?.length ?? 0 } } : {}),
        definition: Object.entries(g.definition)
          .filter(([, d]) => d.hash !== null)
          .map(([key]) => key),
      })),
    });
  }
  return { takenAt: new Date(services.clock.now()).toISOString(), gates };
}

/**
 * One run of `gate` at the base, its names made workspace-relative; undefined when stopped. A
 * failing run on the same tree earlier in the run stands for it too (the run's gate cache):
 * what is red at a base is the same for every task that starts there.
 */
async function runAtBase(
  services: Pick<TaskLoopServices, 'gates' | 'config'>,
  gate: GateConfig,
  where: { workspace: string; roots: readonly string[]; taskId: string },
  stop: AbortSignal,
): Promise<{ tests?: TestCounts; verdict: BaseVerdict; environment?: string } | undefined> {
  const { workspace, roots, taskId } = where;
  // the gate's first run for the task: a cause no change of the agent fixes is looked for (environmentStop.ts)
  const diagnose = environmentDiagnosis(services, workspace);
  // made for the task (the run's gate cache): its iteration 1 on the unchanged base takes it, failures included
  const report = await runGates({ gates: [gate], runner: services.gates, cwd: workspace, signal: stop, reuse: 'any', diagnose, taskId });
  if (stop.aborted || report.outcomes.length === 0) return undefined;
  const [outcome] = report.outcomes;
  // inventory and failures: another worktree's paths would name nothing in this one
  const tests = relativeTests(outcome.parsed.tests, workspace);
  const v = baseVerdictOf(outcome);
  const verdict = { ...v, failing: v.failing.map((f) => relativeFailure(f, workspace, roots)) };
  return { ...(tests ? { tests } : {}), verdict, ...(outcome.environment ? { environment: outcome.environment } : {}) };
}

/**
 * Judges each required gate's outcome against its baseline (see `gates/integrity.ts`) and its
 * failures against the base's (`gates/baseVerdict.ts`, by the evidence of `taskEvidence.ts`, read
 * once for the iteration and only when needed); `baseCommit` lets it tell a renamed test from a
 * deleted one and read what the task changed.
 */
export function integrityJudge(
  services: Pick<TaskLoopServices, 'paths' | 'work' | 'config'>,
  task: Task,
  baseline: IntegrityBaseline,
  baseCommit?: string,
): (gate: GateConfig, outcome: GateOutcome) => Promise<GateOutcome> {
  const workspace = (services.work ?? services.paths).workspace;
  let reported: ReadonlySet<string> = new Set();
  const evidence = lazily(() => readTreeEvidence(workspace, baseCommit, verdictTask(task, services.config), reported));
  return async (gate, outcome) => {
    const base = baseline.gates.find((g) => g.gate === gate.name);
    if (!gate.required || !base) return outcome;
    if (base.command !== gate.command) {
      // the configuration changed between runs (the agent cannot write it): nothing to compare the counts with
      return {
        ...outcome,
        integrity: {
          violations: [],
          allowed: [
            `the gate's command changed in the configuration since the task's base (\`${base.command}\` → \`${gate.command}\`); not compared with the base`,
          ],
        },
      };
    }
    const definition = await readDefinition(baselineParts(base), workspace);
    const completed = !outcome.timedOut && outcome.exitCode === 0;
    // a test file that could not load at the base: its tests now, where the runner names no file for them
    const tests = await attributeToWholeFiles(base.tests?.names, relativeTests(outcome.parsed.tests, workspace), (file) =>
      readTextIfExists(path.join(workspace, file)),
    );
    if (reported.size === 0) reported = reportedTestFiles(tests);
    const { gone, added } = goneAndAdded(base, tests);
    const renames = gone.length > 0 && added.length > 0 && baseCommit ? await renamedTests(workspace, baseCommit, gone, added) : [];
    const guards = await emptiedGuards(base, tests, workspace, baseCommit, evidence);
    const judgement = judgeIntegrity(base, tests, definition, guards, { completed }, renames);
    // a failure already there at the base is the task's unless the evidence says otherwise; a weakened gate fails whatever they are
    const judged = await judgeAgainstBase({ ...outcome, parsed: { ...outcome.parsed, tests } }, base.verdict, TASK_BASE, {
      enabled: gate.baseline !== false,
      judge: evidenceJudge(evidence, { gate: gate.knownFailures, task: task.knownFailures }),
    });
    const allowed = gateChangesAllowed(task.allowGateChanges, gate.name);
    if (!diffRuleApplies(gate, base)) return applyIntegrity(judged, judgement, allowed);
    // its output was not read at the base: the task's diff says whether the tests it runs were weakened (gates/diffRule.ts)
    const findings = await diffRuleFindings(workspace, baseCommit, gate, evidence);
    const rule = diffRuleJudgement(findings ?? [], base.verdict?.passed === true);
    const removed = [...(judgement.gone ?? []), ...(rule.gone ?? [])];
    const both = { ...judgement, violations: [...judgement.violations, ...rule.violations], ...(removed.length ? { gone: removed } : {}) };
    // how to make its output readable, for the runner its command calls (gates/readableHint.ts)
    const hint = readableHint(gate.command, (await readRunnerSetting(workspace)).scripts);
    // the verdict the summary leads with: the run's, unless the rule's findings hold it
    const passed = judged.passed && (allowed || both.violations.length === 0);
    return applyIntegrity({ ...judged, summary: diffRuleSummary({ ...judged, passed }, base.verdict, findings, hint) }, both, allowed);
  };
}

/** The files a runner reported tests in. */
export function reportedTestFiles(tests: TestCounts | undefined): Set<string> {
  return new Set([...(tests?.names ?? []), ...(tests?.failures ?? [])].flatMap((t) => (t.file ? [t.file] : [])));
}

/** Files a rename is looked for in: where the runner says the tests are, else the files changed since the base. */
const MAX_RENAME_FILES = 40;

async function renamedTests(
  workspace: string,
  baseCommit: string,
  gone: readonly TestName[],
  added: readonly TestName[],
): Promise<Rename[]> {
  let files = [...new Set([...gone, ...added].flatMap((t) => (t.file ? [t.file] : [])))];
  if (gone.some((t) => !t.file) || added.some((t) => !t.file)) {
    const diff = await runGit(workspace, ['diff', '--name-only', '--no-renames', baseCommit, '--']);
    if (diff.code === 0) files = [...new Set([...files, ...diff.stdout.split('\n').filter(Boolean)])];
  }
  const changes = [];
  for (const file of files.slice(0, MAX_RENAME_FILES)) {
    const shown = await runGit(workspace, ['show', `${baseCommit}:${file}`]);
    const before = shown.code === 0 ? shown.stdout : undefined;
    const after = await readTextIfExists(path.join(workspace, file)).catch(() => undefined);
    if (before !== undefined && after !== undefined && before !== after && before.length <= 200_000) changes.push({ file, before, after });
  }
  return findRenames(gone, added, changes);
}

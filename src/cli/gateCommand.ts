import { openRalph } from '../core/ralph';
import { EventBus, EventEmitter } from '../core/events';
import { formatEvent } from '../core/eventFormat';
import { eventBase, eventHeadRef, readActionsEnv, writeSummary } from '../core/forge/actionsEnv';
import { checkAgainstBase, type BaseCheckResult } from '../core/loop/task/checkAgainstBase';
import { ProcessGateRunner } from '../core/gates/runGates';
import { ProbingGateRunner } from '../core/gates/probe/probeRunner';
import { NodeCommandRunner } from '../core/commands/processRunner';
import { IsolatedCommandRunner, isolationSettings } from '../core/commands/sandbox';
import { redactorFor } from '../core/commands/secrets';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import type { ForgeCommand } from './command';
import type { CliIo } from './io';

type GateCommand = Extract<ForgeCommand, { kind: 'gate' }>;

/** Exit codes of `ralph gate`: the verdict. */
export const GATE_EXIT = { pass: 0, fail: 1 } as const;

/**
 * `ralph gate`: what the pull_request and merge_group workflows run, so the forge's queue
 * re-checks exactly what Ralph checks. The base is `--base`, else the event's (the pull
 * request's base, the merge group's base).
 */
export async function runGateCommand(workspace: string, command: GateCommand, io: CliIo): Promise<number> {
  const ralph = openRalph(workspace);
  const config = await ralph.config.load();
  const actions = await readActionsEnv();
  const base = command.base ?? eventBase(actions);
  const task = await branchTask(ralph.store, command.taskId ?? taskOfBranch(eventHeadRef(actions)), command.taskId !== undefined);
  const redactor = redactorFor(process.env, { keyVariables: [config.llm.apiKeyEnv], passThrough: [] });
  const bus = new EventBus();
  const emitter = new EventEmitter('gate', bus);
  if (!command.json) {
    bus.subscribe((event) => {
      const line = formatEvent(event, { taskPrefix: false });
      if (line) io.out(line);
    });
  }
  const runnerFor = (root: string) =>
    new ProbingGateRunner(
      new ProcessGateRunner(
        new IsolatedCommandRunner(new NodeCommandRunner(), isolationSettings(root, config), redactor, (message) =>
          io.err(`ralph: ${message}`),
        ),
      ),
    );
  const result = await checkAgainstBase({
    workspace,
    config,
    runnerFor,
    ...(base ? { base } : {}),
    ...(task ? { task } : {}),
    emit: (body) => void emitter.emit(redactor.redactDeep(body)),
  });
  if (command.json) io.out(JSON.stringify(gateJson(result, task), null, 2));
  else {
    for (const note of result.notes) io.out(`  ${note}`);
    io.out(`gate verdict: ${result.verdict.toUpperCase()} (${describeCounts(result)})`);
  }
  if (actions.inActions) await writeSummary(actions, gateSummary(result, task));
  return result.verdict === 'pass' ? GATE_EXIT.pass : GATE_EXIT.fail;
}

/** `ralph/<id>` → `<id>`. */
function taskOfBranch(ref: string | undefined): string | undefined {
  return ref?.startsWith('ralph/') ? ref.slice('ralph/'.length) : undefined;
}

/** The task of the branch (its allowed gate changes apply); a task named with --task must exist. */
async function branchTask(store: TaskStore, taskId: string | undefined, named: boolean): Promise<Task | undefined> {
  if (!taskId) return undefined;
  if (!named && !(await store.exists())) return undefined;
  const found = (await store.list()).find((t) => t.id === taskId);
  if (!found && named) return store.get(taskId); // throws the store's "no such task"
  return found;
}

function describeCounts(result: BaseCheckResult): string {
  const required = result.report.outcomes.filter((o) => o.required);
  const failed = required.filter((o) => !o.passed);
  return failed.length === 0
    ? `${required.length} required gate${required.length === 1 ? '' : 's'} passed`
    : `failed: ${failed.map((o) => `${o.name} (${o.summary})`).join('; ')}`;
}

export function gateJson(result: BaseCheckResult, task: Task | undefined) {
  return {
    verdict: result.verdict,
    base: result.base ?? null,
    head: result.head,
    task: task?.id ?? null,
    notes: result.notes,
    gates: result.report.outcomes.map((o) => ({
      name: o.name,
      kind: o.kind,
      required: o.required,
      passed: o.passed,
      summary: o.summary,
      exitCode: o.exitCode,
      durationMs: o.durationMs,
      ...(o.parsed.tests
        ? {
            tests: {
              passed: o.parsed.tests.passed,
              failed: o.parsed.tests.failed,
              skipped: o.parsed.tests.skipped,
              total: o.parsed.tests.total,
            },
          }
        : {}),
      ...(o.integrity ? { integrity: o.integrity } : {}),
    })),
  };
}

/** The job summary of a gate run: the verdict and one row per gate. */
export function gateSummary(result: BaseCheckResult, task: Task | undefined): string {
  const rows = result.report.outcomes.map(
    (o) =>
      `| ${o.name} | ${o.kind} | ${o.required ? 'yes' : 'no'} | ${o.passed ? '✅ pass' : '❌ fail'} | ${cell(o.summary)}${o.integrity?.violations.length ? `<br>weakened: ${cell(o.integrity.violations.join('; '))}` : ''} |`,
  );
  return [
    `### ralph gate: ${result.verdict === 'pass' ? '✅ pass' : '❌ fail'}`,
    '',
    `Head \`${result.head.slice(0, 10)}\`${result.base ? `, judged against base \`${result.base.slice(0, 10)}\`` : ', no base'}${task ? ` (task ${task.id})` : ''}.`,
    '',
    '| Gate | Kind | Required | Result | Details |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...result.notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

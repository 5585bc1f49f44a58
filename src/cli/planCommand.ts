import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ConfigError, RalphError } from '../core/errors';
import { EventBus } from '../core/events';
import { formatEvent } from '../core/eventFormat';
import { acceptPlan, PlanRefusedError, planProblems } from '../core/intake/plan/planDraft';
import { type PlanOutcome, planFromDocument } from '../core/intake/plan/planner';
import { noteAccepted, planFiles } from '../core/intake/plan/planReport';
import { type PlanDraft, PlanDraftSchema } from '../core/intake/plan/planSchema';
import { formatPlan } from '../core/intake/plan/planText';
import type { RalphPaths } from '../core/paths';
import { openRalph, type Ralph } from '../core/ralph';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import { cliModels } from './cliModels';
import { parseJsonWithLocation } from '../core/util/json';
import { formatZodIssues } from '../core/util/zodIssues';
import type { PlanCommand } from './command';
import type { CliIo } from './io';

/** `ralph plan`: plan a document and (when the person says so) add the tasks; or add a saved proposal. */
export async function runPlanCommand(command: PlanCommand, io: CliIo): Promise<number> {
  const ralph = openRalph(path.resolve(command.workspace));
  const { paths, store } = ralph;
  if (command.accept !== undefined) return accept(paths, store, await readDraft(path.resolve(io.cwd, command.accept)), command, io);
  const outcome = await plan(ralph, command, io);
  const shown = paths.relative(outcome.draftFile);
  if (outcome.problems.length > 0) {
    if (command.json) io.out(JSON.stringify(planJson(paths, outcome), null, 2));
    io.err(
      `ralph: the plan cannot be accepted: ${outcome.problems.join('; ')}. Nothing was saved; fix ${shown} and run: ralph plan --accept ${shown}`,
    );
    return 1;
  }
  const accepted =
    command.yes ||
    (!command.json &&
      io.confirm !== undefined &&
      (await io.confirm(
        `Add ${outcome.draft.tasks.length === 1 ? 'this task' : `these ${outcome.draft.tasks.length} tasks`} to .ralph/tasks.json? [y/N] `,
      )));
  if (!accepted) {
    if (command.json) io.out(JSON.stringify(planJson(paths, outcome), null, 2));
    else io.out(`Nothing was saved. The proposal is in ${shown}; to add it (edit it first if you like): ralph plan --accept ${shown}`);
    return 0;
  }
  const tasks = await addTasks(paths, store, outcome.draft, outcome.draftFile);
  if (command.json) io.out(JSON.stringify({ ...planJson(paths, outcome), accepted: tasks.map((t) => t.id) }, null, 2));
  else printAdded(tasks, io);
  return 0;
}

async function plan(ralph: Ralph, command: PlanCommand, io: CliIo): Promise<PlanOutcome> {
  const { paths, store, workspace } = ralph;
  const { config, model, secretValues, dispose } = await ralph.model(
    cliModels(paths.config, 'use "Ralph: Plan Tasks from Document" there'),
  );
  const bus = new EventBus();
  if (!command.json) {
    bus.subscribe((event) => {
      const line = event.type === 'plan.finished' ? undefined : formatEvent(event);
      if (line) io.err(line);
    });
  }
  const outcome = await planFromDocument(
    { workspace, config, model, bus, store, secretValues },
    { document: command.document as string, section: command.section },
  ).finally(dispose);
  if (!command.json) {
    io.out(formatPlan(outcome.draft, outcome.problems));
    io.out(`\nreport: ${paths.relative(outcome.reportFile)} · run log: ${paths.relative(outcome.logFile)}`);
  }
  return outcome;
}

async function accept(paths: RalphPaths, store: TaskStore, draft: PlanDraft, command: PlanCommand, io: CliIo): Promise<number> {
  const problems = planProblems(draft, await store.list());
  if (!command.json) io.out(formatPlan(draft, problems));
  if (problems.length > 0) throw new PlanRefusedError(problems);
  // --accept is the person's acceptance: nothing more to ask
  const tasks = await addTasks(paths, store, draft, planFiles(paths, draft.runId).draft);
  if (command.json) io.out(JSON.stringify({ runId: draft.runId, accepted: tasks.map((t) => t.id) }, null, 2));
  else printAdded(tasks, io);
  return 0;
}

/** Adds the tasks, notes it on the plan's report, and removes the saved proposal (accepting it twice would add them twice). */
async function addTasks(paths: RalphPaths, store: TaskStore, draft: PlanDraft, draftFile: string): Promise<Task[]> {
  await store.ensure();
  const tasks = await acceptPlan(store, draft);
  await noteAccepted(paths, draft.runId, tasks);
  await fs.rm(draftFile, { force: true });
  return tasks;
}

function printAdded(tasks: readonly Task[], io: CliIo): void {
  io.out(`added ${tasks.length} task${tasks.length === 1 ? '' : 's'}:`);
  for (const task of tasks) io.out(`  ${task.id}  ${task.title}${task.dependsOn.length ? `  (after ${task.dependsOn.join(', ')})` : ''}`);
  io.out('run them with: ralph run');
}

function planJson(paths: RalphPaths, outcome: PlanOutcome) {
  return {
    runId: outcome.runId,
    draft: outcome.draft,
    problems: outcome.problems,
    report: paths.relative(outcome.reportFile),
    draftFile: paths.relative(outcome.draftFile),
    spend: outcome.spend,
  };
}

async function readDraft(file: string): Promise<PlanDraft> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined)
    throw new RalphError(`${file} does not exist (proposals are kept in .ralph/reports/plans/ until accepted)`, 'plan-document');
  const json = parseJsonWithLocation(text);
  if (!json.ok) throw new ConfigError(`${file}: ${json.message}`, file);
  const parsed = PlanDraftSchema.safeParse(json.value);
  if (!parsed.success) throw new ConfigError(`${file} is not a plan proposal:\n  ${formatZodIssues(parsed.error).join('\n  ')}`, file);
  return parsed.data;
}

import { parseArgs } from 'node:util';
import type { EditFields } from '../core/tasks/actionRules';
import { TASK_TYPES, type TaskType } from '../core/tasks/schema';
import { gateAllowance, verdictOptions } from './verdictArgs';

/** `ralph task <action> <id>`: the recovery actions of the extension's task menu (--yes is accepted by all, for scripts). */
export const TASK_ACTIONS = ['retry', 'unblock', 'cancel', 'edit', 'increase-max', 'delete', 'rollback', 'cleanup'] as const;
export type TaskActionVerb = (typeof TASK_ACTIONS)[number];

/** Actions that lose something (a task, commits' effects): confirmed on a terminal, or --yes. */
export const DESTRUCTIVE: ReadonlySet<TaskActionVerb> = new Set(['delete', 'rollback']);

export const TASK_ACTIONS_USAGE = `  task retry <id> [--fresh]          timed out, failed, halted, cancelled, blocked or done → todo, fresh counter;
                                     a kept worktree is continued in, --fresh drops it and its branch
                                     and starts over from the target branch's current tip
  task unblock <id>                  blocked / needs_help → resumable (keeps its iterations and checkpoint)
  task cancel <id>                   stop the task from being picked again
  task edit <id> [--title T] [--prompt P] [--promise X] [--priority N] [--max-iterations N]
        [--type T] [--complexity N] [--depends-on ID]... [--review manual|auto]
        [--check "CMD" ("" removes it)] [--proof fail-to-pass|none] [--proof-test GLOB]...
        [--known-failure "TEST"]... ("" clears them) failing tests a person declares unrelated to this task
        [--allow-gate-changes all|GATE]...  e.g. to let a task remove the tests a person agreed to
  task increase-max <id> [--by N] [--minutes]
                                     raise the limit that ended it — its iterations (--by, default 10) or, after
                                     a time-out by the clock, its minutes (--by, default the configured limit);
                                     --minutes raises the time limit; a timed-out task becomes resumable
  task delete <id> [--yes]           remove the task and its checkpoint (commits and reports stay)
  task rollback <id> [--yes]         revert the task's own commits in a new commit (later work is kept),
                                     then the task is todo again; refused, changing nothing, on a conflict
  task cleanup <id> [--yes]          remove the kept worktree of a failed, timed-out, halted, blocked or
                                     cancelled task (its branch ralph/<id> and status stay); refused when
                                     it has uncommitted changes unless confirmed
        delete, rollback and cleanup (with uncommitted changes) ask y/N on a terminal; without a
        terminal they need --yes.
        Exit codes: 0 done · 1 could not be done (conflict, uncommitted changes) · 2 usage, unknown task,
        or the task's status does not allow it · 4 not confirmed (declined, or no terminal and no --yes)`;

export interface TaskActionCommand {
  kind: 'task.action';
  workspace: string;
  action: TaskActionVerb;
  taskId: string;
  yes: boolean;
  /** edit: the fields to change. */
  fields?: EditFields;
  /** increase-max: by how many iterations (or minutes). */
  by?: number;
  /** increase-max: raise the time limit (minutes) rather than whichever ended the task. */
  minutes?: boolean;
  /** retry: drop the kept worktree and start from the current tip. */
  fresh?: boolean;
}

/** Thrown for a malformed action command; the CLI turns it into its usage error. */
export class TaskActionUsageError extends Error {}

const OPTIONS = {
  workspace: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  title: { type: 'string' },
  prompt: { type: 'string' },
  promise: { type: 'string' },
  priority: { type: 'string' },
  'max-iterations': { type: 'string' },
  by: { type: 'string' },
  fresh: { type: 'boolean' },
  minutes: { type: 'boolean' },
  type: { type: 'string' },
  complexity: { type: 'string' },
  'depends-on': { type: 'string', multiple: true },
  review: { type: 'string' },
  check: { type: 'string' },
  proof: { type: 'string' },
  'proof-test': { type: 'string', multiple: true },
  'known-failure': { type: 'string', multiple: true },
  'allow-gate-changes': { type: 'string', multiple: true },
} as const;

const OPTIONS_OF: Record<TaskActionVerb, (keyof typeof OPTIONS)[]> = {
  retry: ['fresh'],
  unblock: [],
  cancel: [],
  edit: [
    'title',
    'prompt',
    'promise',
    'priority',
    'max-iterations',
    'type',
    'complexity',
    'depends-on',
    'review',
    'check',
    'proof',
    'proof-test',
    'known-failure',
    'allow-gate-changes',
  ],
  'increase-max': ['by', 'minutes'],
  delete: [],
  rollback: [],
  cleanup: [],
};

/** The action command `argv` names, or undefined when it is another command. */
export function parseTaskAction(argv: readonly string[], cwd: string): TaskActionCommand | undefined {
  const loose = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false });
  const [command, sub] = loose.positionals;
  if (command !== 'task' || !(TASK_ACTIONS as readonly string[]).includes(sub ?? '')) return undefined;
  const action = sub as TaskActionVerb;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new TaskActionUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const extra = Object.keys(values).filter(
    (key) => key !== 'workspace' && key !== 'yes' && !OPTIONS_OF[action].includes(key as keyof typeof OPTIONS),
  );
  if (extra.length > 0) throw new TaskActionUsageError(`option ${extra.map((k) => `--${k}`).join(', ')} does not apply to task ${action}`);
  const taskId = positionals[2];
  if (!taskId) throw new TaskActionUsageError(`task ${action} needs a task id: ralph task ${action} <id>`);
  if (positionals.length > 3) throw new TaskActionUsageError(`unexpected argument "${positionals[3]}"`);
  const command_: TaskActionCommand = { kind: 'task.action', workspace: values.workspace ?? cwd, action, taskId, yes: values.yes ?? false };
  if (action === 'edit') {
    const fields: EditFields = {};
    if (values.title !== undefined) fields.title = values.title;
    if (values.prompt !== undefined) fields.prompt = values.prompt;
    if (values.promise !== undefined) fields.promise = values.promise;
    if (values.priority !== undefined) fields.priority = number(values.priority, '--priority', false);
    if (values['max-iterations'] !== undefined) fields.maxIterations = number(values['max-iterations'], '--max-iterations', true);
    if (values.type !== undefined) {
      if (!(TASK_TYPES as readonly string[]).includes(values.type))
        throw new TaskActionUsageError(`--type must be one of ${TASK_TYPES.join(', ')}`);
      fields.type = values.type as TaskType;
    }
    if (values.complexity !== undefined) {
      const complexity = number(values.complexity, '--complexity', true);
      if (complexity > 14) throw new TaskActionUsageError(`--complexity must be a whole number from 1 to 14, got "${values.complexity}"`);
      fields.complexity = complexity;
    }
    if (values['depends-on'] !== undefined)
      fields.dependsOn = values['depends-on']
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean);
    if (values.review !== undefined) {
      if (values.review !== 'auto' && values.review !== 'manual') throw new TaskActionUsageError('--review must be manual or auto');
      fields.review = values.review;
    }
    const usage = (message: string) => new TaskActionUsageError(message);
    Object.assign(fields, verdictOptions(values, usage));
    const allow = gateAllowance(values['allow-gate-changes'], usage);
    if (allow !== undefined) fields.allowGateChanges = allow;
    if (Object.keys(fields).length === 0) {
      throw new TaskActionUsageError(
        'task edit needs at least one of --title, --prompt, --promise, --priority, --max-iterations, --type, --complexity, --depends-on, --review, --check, --proof, --proof-test, --known-failure, --allow-gate-changes',
      );
    }
    command_.fields = fields;
  }
  if (action === 'retry' && values.fresh) command_.fresh = true;
  if (action === 'increase-max') {
    if (values.by !== undefined) command_.by = number(values.by, '--by', !values.minutes);
    if (values.minutes) command_.minutes = true;
  }
  return command_;
}

function number(text: string, name: string, positiveInteger: boolean): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || (positiveInteger && (!Number.isInteger(value) || value < 1))) {
    throw new TaskActionUsageError(`${name} must be ${positiveInteger ? 'a whole number of at least 1' : 'a number'}, got "${text}"`);
  }
  return value;
}

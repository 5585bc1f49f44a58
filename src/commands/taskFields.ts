/**
 * The settings Add Task and Edit Task offer after the title, request and promise — type,
 * complexity (the starting model tier), priority, dependencies, max iterations, the task's own
 * `check` command and its review mode — as a menu the person leaves with Done, so the common
 * case stays three questions and the rest is one step away.
 */
import type { RalphConfig } from '../core/config/schema';
import { TASK_TYPES, type Task, type TaskType } from '../core/tasks/schema';
import type { Prompts } from '../ui/dialogs';

/** The fields the menu sets; `check: null` removes the task's check command. */
export interface TaskSettings {
  type?: TaskType;
  complexity?: number;
  priority?: number;
  dependsOn?: string[];
  maxIterations?: number;
  check?: string | null;
  review?: 'auto' | 'manual';
}

type Field = keyof TaskSettings | 'done';

/** What a complexity means for the starting model (the ladder, escalation.ts: ≤ 4 → tier 0, ≤ 8 → 1, else 2). */
function tierOf(complexity: number): string {
  return complexity <= 4 ? 'the cheapest model' : complexity <= 8 ? 'the second model' : 'the third model';
}

/**
 * Asks for settings until Done (or Escape, which keeps what was set so far). `current` is the
 * task being edited (or the defaults of a new one); only what the person changed is returned.
 */
export async function askTaskSettings(
  prompts: Prompts,
  current: Partial<Task>,
  others: readonly Task[],
  config: Pick<RalphConfig, 'loop' | 'merge'> | undefined,
): Promise<TaskSettings> {
  const set: TaskSettings = {};
  const value = <K extends keyof TaskSettings>(key: K) => (key in set ? set[key] : (current[key as keyof Task] as TaskSettings[K]));
  for (;;) {
    const type = value('type') ?? 'feature';
    const complexity = value('complexity') ?? 3;
    const deps = value('dependsOn') ?? [];
    const check = value('check');
    const field = await prompts.choose<Field>('Task settings — pick one to change, or Done', [
      { id: 'done', label: '$(check) Done' },
      { id: 'type', label: `Type: ${type}`, detail: 'security and architecture start on the top model' },
      { id: 'complexity', label: `Complexity: ${complexity} of 14`, detail: `starts on ${tierOf(complexity)} of llm.models` },
      { id: 'priority', label: `Priority: ${value('priority') ?? 100}`, detail: 'lower runs first' },
      { id: 'dependsOn', label: `Depends on: ${deps.length ? deps.join(', ') : 'nothing'}`, detail: 'starts once these are done (merged)' },
      {
        id: 'maxIterations',
        label: `Max iterations: ${value('maxIterations') ?? `${config?.loop.maxIterations ?? 50} (loop.maxIterations)`}`,
      },
      { id: 'check', label: `Check command: ${check ?? 'none'}`, detail: 'a command run as a required gate of this task only' },
      {
        id: 'review',
        label: `Review: ${value('review') ?? `${config?.merge.review ?? 'auto'} (merge.review)`}`,
        detail: 'manual: its finished work waits for your review before it lands',
      },
    ]);
    if (!field || field === 'done') return set;
    await askOne(prompts, field, set, { type, complexity, deps, check, others, current });
  }
}

/** What the menu shows now, and the tasks a dependency can name. */
interface Now {
  type: TaskType;
  complexity: number;
  deps: string[];
  check: string | null | undefined;
  others: readonly Task[];
  current: Partial<Task>;
}

async function askOne(prompts: Prompts, field: keyof TaskSettings, set: TaskSettings, now: Now): Promise<void> {
  switch (field) {
    case 'type': {
      const picked = await prompts.choose<TaskType>(
        'Type of the task',
        TASK_TYPES.map((t) => ({ id: t, label: t === now.type ? `$(check) ${t}` : t })),
      );
      if (picked) set.type = picked;
      return;
    }
    case 'review': {
      const picked = await prompts.choose<'auto' | 'manual'>('Review before it lands?', [
        { id: 'auto', label: 'auto', detail: 'lands once its merged check passes' },
        { id: 'manual', label: 'manual', detail: 'waits as "Ready for review" until you approve it' },
      ]);
      if (picked) set.review = picked;
      return;
    }
    case 'dependsOn': {
      const ids = new Set(now.others.filter((t) => t.id !== now.current.id).map((t) => t.id));
      const text = await prompts.input({
        title: 'Depends on',
        prompt: `Task ids, separated by commas (empty: none). Known: ${[...ids].slice(0, 12).join(', ')}${ids.size > 12 ? ', …' : ''}`,
        value: now.deps.join(', '),
        validateInput: (v) => {
          const unknown = split(v).filter((id) => !ids.has(id));
          return unknown.length ? `not in the store: ${unknown.join(', ')}` : undefined;
        },
      });
      if (text !== undefined) set.dependsOn = split(text);
      return;
    }
    case 'check': {
      const text = await prompts.input({
        title: 'Check command',
        prompt: 'A command run as a required gate of this task only, e.g. npm test -- login (empty: none)',
        value: now.check ?? '',
      });
      if (text !== undefined) set.check = text.trim() ? text.trim() : null;
      return;
    }
    default:
      return askNumber(prompts, field, set, now);
  }
}

type NumberField = 'complexity' | 'priority' | 'maxIterations';

/** Complexity, priority and max iterations: a number typed in, checked as it is typed. */
async function askNumber(prompts: Prompts, field: NumberField, set: TaskSettings, now: Now): Promise<void> {
  const limits: Record<NumberField, { prompt: string; test: RegExp; value: unknown }> = {
    complexity: {
      prompt: 'Complexity from 1 to 14 (≤ 4 starts on the cheapest model, ≤ 8 on the second, else the third)',
      test: /^(?:[1-9]|1[0-4])$/,
      value: now.complexity,
    },
    priority: {
      prompt: 'Priority: a number, lower runs first',
      test: /^-?\d+(?:\.\d+)?$/,
      value: set.priority ?? now.current.priority ?? 100,
    },
    maxIterations: {
      prompt: 'Max iterations: a whole number of at least 1 (empty: loop.maxIterations)',
      test: /^(?:[1-9]\d{0,4})?$/,
      value: set.maxIterations ?? now.current.maxIterations ?? '',
    },
  };
  const limit = limits[field];
  const text = await prompts.input({
    title: field,
    prompt: limit.prompt,
    value: String(limit.value),
    validateInput: (v) => (limit.test.test(v.trim()) ? undefined : limit.prompt),
  });
  if (text === undefined || (field === 'maxIterations' && text.trim() === '')) return;
  set[field] = Number(text.trim());
}

function split(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

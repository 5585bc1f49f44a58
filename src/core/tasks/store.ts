import { ConfigError, RalphError, TaskNotFoundError } from '../errors';
import type { RalphPaths } from '../paths';
import type { Clock } from '../ports';
import { systemClock } from '../ports';
import { readTextIfExists, writeJsonAtomic } from '../util/atomicWrite';
import { parseJsonWithLocation } from '../util/json';
import { withFileLock } from '../util/fileLock';
import { Mutex } from '../util/mutex';
import { formatZodIssues } from '../util/zodIssues';
import { type NewTask, NewTaskSchema, type Task, type TaskFile, TaskFileSchema } from './schema';

export type TaskPatch = Partial<Omit<Task, 'id' | 'createdAt'>>;
type Listener = (tasks: readonly Task[]) => void;

/**
 * The file-backed task store `.ralph/tasks.json`. Every mutation re-reads the file, so edits
 * made by another process (the CLI beside the extension, a person in an editor) are kept,
 * writes are atomic, and each read-modify-write holds a cross-process lock (`tasks.json.lock`).
 */
export class TaskStore {
  private readonly mutex = new Mutex();
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly paths: RalphPaths,
    private readonly clock: Clock = systemClock,
  ) {}

  get file(): string {
    return this.paths.tasks;
  }

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  async exists(): Promise<boolean> {
    return (await readTextIfExists(this.paths.tasks)) !== undefined;
  }

  async list(): Promise<Task[]> {
    return (await this.read()).tasks;
  }

  async get(id: string): Promise<Task> {
    const task = (await this.list()).find((t) => t.id === id);
    if (!task) throw new TaskNotFoundError(id);
    return task;
  }

  /** Creates the file with no tasks when it is missing. */
  async ensure(): Promise<void> {
    await this.locked(async () => {
      if ((await readTextIfExists(this.paths.tasks)) === undefined) {
        await writeJsonAtomic(this.paths.tasks, { version: 1, tasks: [] } satisfies TaskFile);
      }
    });
  }

  async add(input: NewTask): Promise<Task> {
    const parsed = NewTaskSchema.safeParse(input);
    if (!parsed.success) throw new RalphError(`invalid task: ${formatZodIssues(parsed.error).join('; ')}`, 'invalid-task');
    const fields = parsed.data;
    return this.mutate((file) => {
      const id = fields.id ?? nextTaskId(file.tasks);
      if (file.tasks.some((t) => t.id === id)) throw new RalphError(`a task with id "${id}" already exists`, 'duplicate-task');
      for (const dependency of fields.dependsOn ?? []) {
        if (!file.tasks.some((t) => t.id === dependency)) {
          throw new RalphError(`task depends on "${dependency}", which is not in the store`, 'unknown-dependency');
        }
      }
      const now = new Date(this.clock.now()).toISOString();
      const task: Task = {
        id,
        title: fields.title,
        prompt: fields.prompt,
        promise: fields.promise,
        status: 'todo',
        priority: fields.priority ?? 100,
        dependsOn: fields.dependsOn ?? [],
        type: fields.type ?? 'feature',
        complexity: fields.complexity ?? 3,
        maxIterations: fields.maxIterations,
        ...(fields.allowGateChanges !== undefined ? { allowGateChanges: fields.allowGateChanges } : {}),
        iterations: 0,
        createdAt: now,
        updatedAt: now,
      };
      file.tasks.push(task);
      return task;
    });
  }

  async update(id: string, patch: TaskPatch): Promise<Task> {
    return this.mutate((file) => {
      const index = file.tasks.findIndex((t) => t.id === id);
      if (index < 0) throw new TaskNotFoundError(id);
      const updated = TaskFileSchema.shape.tasks.element.parse({
        ...file.tasks[index],
        ...withoutUndefined(patch),
        id,
        updatedAt: new Date(this.clock.now()).toISOString(),
      });
      // explicit `undefined` in the patch clears an optional field
      for (const [key, value] of Object.entries(patch)) {
        if (value === undefined) delete (updated as Record<string, unknown>)[key];
      }
      file.tasks[index] = updated;
      return updated;
    });
  }

  async remove(id: string): Promise<void> {
    await this.mutate((file) => {
      const index = file.tasks.findIndex((t) => t.id === id);
      if (index < 0) throw new TaskNotFoundError(id);
      const dependents = file.tasks.filter((t) => t.dependsOn.includes(id)).map((t) => t.id);
      if (dependents.length > 0) {
        throw new RalphError(`cannot delete "${id}": ${dependents.join(', ')} depend on it`, 'has-dependents');
      }
      file.tasks.splice(index, 1);
    });
  }

  private async mutate<T>(change: (file: TaskFile) => T): Promise<T> {
    const { result, tasks } = await this.locked(async () => {
      const file = await this.read();
      const result = change(file);
      await writeJsonAtomic(this.paths.tasks, file);
      return { result, tasks: file.tasks };
    });
    for (const listener of this.listeners) listener(tasks);
    return result;
  }

  /** In-process mutex first (cheap), then the cross-process file lock: other CLIs and the extension. */
  private locked<T>(work: () => Promise<T>): Promise<T> {
    return this.mutex.run(() => withFileLock(this.paths.tasks, work));
  }

  private async read(): Promise<TaskFile> {
    const shown = this.paths.relative(this.paths.tasks);
    const text = await readTextIfExists(this.paths.tasks);
    if (text === undefined) return { version: 1, tasks: [] };
    const parsed = parseJsonWithLocation(text);
    if (!parsed.ok) throw new ConfigError(`${shown}: ${parsed.message}`, shown);
    const result = TaskFileSchema.safeParse(parsed.value);
    if (!result.success) {
      throw new ConfigError(`${shown} is invalid:\n  ${formatZodIssues(result.error, '', TaskFileSchema).join('\n  ')}`, shown);
    }
    return result.data;
  }
}

/** `T-001`, `T-002`, … one past the highest numbered id in the store. */
export function nextTaskId(tasks: readonly Task[]): string {
  let highest = 0;
  for (const task of tasks) {
    const match = /^T-(\d+)$/.exec(task.id);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return `T-${String(highest + 1).padStart(3, '0')}`;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

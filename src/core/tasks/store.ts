import { createHash } from 'node:crypto';
import { boundText } from '../util/bounded';
import { ConfigError, RalphError, TaskNotFoundError } from '../errors';
import type { RalphPaths } from '../paths';
import type { Clock } from '../ports';
import { systemClock } from '../ports';
import { readTextIfExists, writeFileAtomic } from '../util/atomicWrite';
import { parseJsonWithLocation } from '../util/json';
import { withFileLock } from '../util/fileLock';
import { Mutex } from '../util/mutex';
import { formatZodIssues } from '../util/zodIssues';
import { type NewTask, NewTaskSchema, type Task, type TaskFile, TaskFileSchema } from './schema';
import { type FileSig, freezeTask, readWithSig, sameSig, sameTask, statSig, TaskFileWriter, trustworthy } from './storeFile';

export type TaskPatch = Partial<Omit<Task, 'id' | 'createdAt'>>;
type Listener = (tasks: readonly Task[]) => void;

/**
 * The last version of the file this store read or wrote: its bytes, what they parse to (tasks
 * frozen: shared by every caller), an index by id, and the signature that proves it current.
 */
interface Parsed {
  data: Buffer;
  file: TaskFile;
  byId: Map<string, Task>;
  sig: FileSig | undefined;
  checkedAtMs: number;
}

/**
 * The file-backed task store `.ralph/tasks.json`. Every mutation re-reads the file, so edits
 * made by another process (the CLI beside the extension, a person in an editor) are kept,
 * writes are atomic, and each read-modify-write holds a cross-process lock (`tasks.json.lock`).
 *
 * At 10,000 tasks parsing and validating the file costs tens of milliseconds: the last version
 * read or written is kept with its bytes. A read whose bytes are the kept ones reuses its parse
 * (a read-modify-write always reads the bytes, under the lock); a plain read skips even the
 * read when the file's signature (inode, size, modification and change times) is the kept one
 * and that version was old enough for the signature to prove it (see `trustworthy`). A write
 * serialises only the tasks that changed (`TaskFileWriter`).
 */
export class TaskStore {
  private readonly mutex = new Mutex();
  private readonly listeners = new Set<Listener>();
  private readonly writer = new TaskFileWriter();
  private cache: Parsed | undefined;
  private lastWritten: Buffer | undefined;
  private writes = 0;
  /** Digests of the last few versions this store wrote. */
  private readonly recent: string[] = [];

  constructor(
    private readonly paths: RalphPaths,
    private readonly clock: Clock = systemClock,
  ) {}

  get file(): string {
    return this.paths.tasks;
  }

  /**
   * The store's own writes, for the control-file guard: how many so far, whether `data` is one of
   * the recent ones (a write whose acknowledgement has not reached the guard yet, or one under
   * way), and the last one — the orchestrator's own copy a change by a command is undone to.
   */
  readonly own = {
    count: (): number => this.writes,
    wrote: (data: Buffer): boolean => this.recent.includes(digest(data)),
    last: (): Buffer | undefined => this.lastWritten,
  };

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  async exists(): Promise<boolean> {
    try {
      return statSig(this.paths.tasks) !== undefined;
    } catch {
      // a path that cannot be a file (`.ralph` a file): reading says so
      return (await readTextIfExists(this.paths.tasks)) !== undefined;
    }
  }

  /** The tasks (a new array each call; the task objects are frozen and shared). */
  async list(): Promise<Task[]> {
    return [...(await this.current()).file.tasks];
  }

  async get(id: string): Promise<Task> {
    const task = (await this.current()).byId.get(id);
    if (!task) throw new TaskNotFoundError(id);
    return task;
  }

  /** Creates the file with no tasks when it is missing. */
  async ensure(): Promise<void> {
    await this.locked(async () => {
      if ((await readTextIfExists(this.paths.tasks)) === undefined) await this.write({ version: 1, tasks: [] });
    });
  }

  async add(input: NewTask): Promise<Task> {
    return (await this.addMany([input]))[0];
  }

  /**
   * Adds tasks in one write, all or none (an accepted plan, an issue import): each may depend on
   * a task already in the store or on one before it in `inputs`.
   */
  async addMany(inputs: readonly NewTask[]): Promise<Task[]> {
    const parsed = inputs.map((input, index) => {
      const result = NewTaskSchema.safeParse(input);
      if (result.success) return result.data;
      throw new RalphError(
        `invalid task${inputs.length > 1 ? ` ${index + 1} ("${String((input as { title?: unknown }).title ?? '')}")` : ''}: ${formatZodIssues(result.error).join('; ')}`,
        'invalid-task',
      );
    });
    return this.mutate((file, byId) => {
      const known = new Set(byId.keys());
      const now = new Date(this.clock.now()).toISOString();
      return parsed.map((fields) => {
        const id = fields.id ?? nextTaskId(file.tasks);
        if (known.has(id)) throw new RalphError(`a task with id "${id}" already exists`, 'duplicate-task');
        for (const dependency of fields.dependsOn ?? []) {
          if (!known.has(dependency))
            throw new RalphError(`task depends on "${dependency}", which is not in the store`, 'unknown-dependency');
        }
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
          // absent rather than undefined, in the schema's key order: the bytes written are the bytes a read gives back
          ...(fields.maxIterations !== undefined ? { maxIterations: fields.maxIterations } : {}),
          ...(fields.allowGateChanges !== undefined ? { allowGateChanges: fields.allowGateChanges } : {}),
          ...(fields.check !== undefined ? { check: fields.check } : {}),
          ...(fields.proof !== undefined ? { proof: fields.proof } : {}),
          ...(fields.proofTests !== undefined ? { proofTests: fields.proofTests } : {}),
          ...(fields.knownFailures !== undefined ? { knownFailures: fields.knownFailures } : {}),
          iterations: 0,
          ...(fields.review !== undefined ? { review: fields.review } : {}),
          ...(fields.source !== undefined ? { source: fields.source } : {}),
          ...(fields.agent !== undefined ? { agent: fields.agent } : {}),
          createdAt: now,
          updatedAt: now,
        };
        file.tasks.push(task);
        known.add(id);
        return task;
      });
    });
  }

  async update(id: string, patch: TaskPatch): Promise<Task> {
    return this.mutate((file, byId) => {
      const current = byId.get(id);
      if (!current) throw new TaskNotFoundError(id);
      const index = file.tasks.indexOf(current);
      const updated = TaskFileSchema.shape.tasks.element.parse({
        ...file.tasks[index],
        ...withoutUndefined(boundModelText(patch)),
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

  /**
   * A read-modify-write under the lock. `change` gets a copy of the task list to edit (the
   * tasks themselves are frozen: a change replaces a task, never edits it) and the index by id
   * of the tasks as read.
   */
  private async mutate<T>(change: (file: TaskFile, byId: ReadonlyMap<string, Task>) => T): Promise<T> {
    const { result, tasks } = await this.locked(async () => {
      const read = await this.read();
      const file: TaskFile = { ...read.file, tasks: [...read.file.tasks] };
      const result = change(file, read.byId);
      await this.write(file);
      return { result, tasks: file.tasks };
    });
    for (const listener of this.listeners) listener([...tasks]);
    return result;
  }

  /** Writes `file` atomically and keeps it as the version this store knows. */
  private async write(file: TaskFile): Promise<void> {
    const data = this.writer.serialize(file);
    this.cache = undefined;
    this.lastWritten = Buffer.from(data);
    this.writes++;
    this.recent.push(digest(data));
    if (this.recent.length > RECENT_WRITES) this.recent.shift();
    await writeFileAtomic(this.paths.tasks, data);
    const checkedAtMs = Date.now();
    const sig = safeStatSig(this.paths.tasks);
    const tasks = file.tasks.map(freezeTask);
    this.cache = { data, file: { ...file, tasks }, byId: new Map(tasks.map((t) => [t.id, t])), sig, checkedAtMs };
  }

  /** The file as it is now: the kept version when its signature proves it unchanged, else read. */
  private async current(): Promise<Parsed> {
    const kept = this.cache;
    if (kept?.sig && trustworthy(kept.sig, kept.checkedAtMs)) {
      const sig = safeStatSig(this.paths.tasks);
      if (sameSig(sig, kept.sig)) return kept;
    }
    return this.read();
  }

  /** In-process mutex first (cheap), then the cross-process file lock: other CLIs and the extension. */
  private locked<T>(work: () => Promise<T>): Promise<T> {
    return this.mutex.run(() => withFileLock(this.paths.tasks, work));
  }

  /**
   * Reads the file; bytes equal to the kept version's reuse its parse. A mutation always comes
   * here: the signature alone never decides what is written.
   */
  private async read(): Promise<Parsed> {
    let got;
    try {
      got = await readWithSig(this.paths.tasks);
    } catch (error) {
      // EISDIR, ENOTDIR…: the store's own clear message
      await readTextIfExists(this.paths.tasks);
      throw error;
    }
    if (got === undefined) {
      this.cache = undefined;
      return { data: Buffer.alloc(0), file: { version: 1, tasks: [] }, byId: new Map(), sig: undefined, checkedAtMs: Date.now() };
    }
    const kept = this.cache;
    if (kept && kept.data.equals(got.data)) {
      // the same bytes: the same tasks; the signature now proves them (once old enough)
      this.cache = { ...kept, sig: got.sig, checkedAtMs: got.checkedAtMs };
      return this.cache;
    }
    const file = this.parse(got.data.toString('utf8'));
    // another writer changed some tasks: the ones it left as they were stay the very objects kept
    // (their serialisation is reused at the next write, and listeners can tell what changed)
    const tasks = file.tasks.map((task) => {
      const same = kept?.byId.get(task.id);
      return same && sameTask(same, task) ? same : freezeTask(task);
    });
    const parsed: Parsed = {
      data: got.data,
      file: { ...file, tasks },
      byId: new Map(tasks.map((t) => [t.id, t])),
      sig: got.sig,
      checkedAtMs: got.checkedAtMs,
    };
    this.cache = parsed;
    return parsed;
  }

  private parse(text: string): TaskFile {
    const shown = this.paths.relative(this.paths.tasks);
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

const RECENT_WRITES = 16;

function digest(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('base64');
}

function safeStatSig(file: string): FileSig | undefined {
  try {
    return statSig(file);
  } catch {
    return undefined;
  }
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A reason or signal a model wrote (a 200 kB BLOCKED reason) is kept bounded in the store. */
function boundModelText(patch: TaskPatch): TaskPatch {
  const bounded: TaskPatch = { ...patch };
  if (typeof patch.blockedReason === 'string') bounded.blockedReason = boundText(patch.blockedReason);
  if (typeof patch.lastSignal === 'string') bounded.lastSignal = boundText(patch.lastSignal);
  return bounded;
}

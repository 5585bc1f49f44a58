import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../errors';
import type { RalphEventBody } from '../events';
import type { RalphPaths } from '../paths';

/** One control file an agent's command (or a gate) changed; it has been put back. */
export interface TamperFinding {
  /** Workspace-relative path. */
  file: string;
  change: 'modified' | 'created' | 'deleted';
  /** What was running: the command line, or the gate. */
  during: string;
}

type Entry =
  { kind: 'file'; data: Buffer; mode: number } | { kind: 'dir'; mode: number } | { kind: 'link'; target: string } | { kind: 'other' };
type Snapshot = Map<string, Entry>;

/**
 * Keeps the orchestrator's control files out of the agent's reach while its commands and the
 * gates run: every file under `.ralph/` (`config.json`, `tasks.json`, `state/`, `run.lock`, other
 * tasks' notes…; not the run log, reports, worktrees, nor the running task's own notes), and
 * git's `config`, `hooks/` and `info/`. Before a command they are captured; after it, whatever changed is put
 * back exactly (created files removed, changed ones rewritten, deleted ones recreated), the
 * changed copies are kept under the task's reports folder, and the change is reported as
 * tampering: a `warning` event, a note in the command's result, the next iteration's feedback.
 *
 * The orchestrator's own writes are not tampering: the task store announces each write (the
 * extension may edit tasks while a command runs) and that content becomes the expected one;
 * a run lock naming this process is this process's own.
 */
/** The task store's own writes, as the guard sees them (`TaskStore.own`). */
export interface StoreWrites {
  file: string;
  count(): number;
  wrote(data: Buffer): boolean;
  last(): Buffer | undefined;
}

export class ControlFileGuard {
  private readonly roots: string[];
  private readonly gitDirs: string[];
  private depth = 0;
  private expected: Snapshot | undefined;
  private findings: TamperFinding[] = [];
  private context: { taskId: string; iteration: number } | undefined;
  /** The store's write count when the snapshot was taken. */
  private storeWrites = 0;

  constructor(
    private readonly paths: RalphPaths,
    private readonly emit: (body: RalphEventBody) => void,
    /**
     * With several agents at once, the other tasks' checkpoints are written by their own loops
     * while this task's commands run: only this task's checkpoint is watched then. (A running
     * task's checkpoint is rewritten from memory at its next save, so a forged one of another
     * task would not outlive that save.) `store`: the task store's own writes (another agent's
     * loop may write it while this command runs, before its write is acknowledged): never
     * tampering, and what a command's change to the store is undone to when newer than the snapshot.
     */
    private readonly options: { ownStateOnly?: boolean; store?: StoreWrites } = {},
  ) {
    const git = gitDirs(paths.workspace);
    this.gitDirs = git;
    this.roots = [
      paths.dir,
      ...git.flatMap((dir) => [
        path.join(dir, 'config'),
        path.join(dir, 'config.worktree'),
        path.join(dir, 'hooks'),
        path.join(dir, 'info'),
      ]),
    ];
  }

  /** The task and iteration findings are reported on, until the next call. */
  begin(taskId: string, iteration: number): void {
    this.context = { taskId, iteration };
    this.expected = undefined;
    this.findings = [];
  }

  /** The orchestrator wrote `file`: its content now is the expected one (no-op outside a command). */
  acknowledge(file: string): void {
    if (!this.expected) return;
    for (const key of [...this.expected.keys()]) if (key === file || key.startsWith(`${file}${path.sep}`)) this.expected.delete(key);
    captureSync(file, this.expected, () => false);
  }

  /**
   * An orchestrator commit: a last look first, then the commit, whose identity fallback may
   * write git's config (that write is the orchestrator's own).
   */
  async orchestratorCommit<T>(fn: () => Promise<T>): Promise<T> {
    await this.settle();
    try {
      return await fn();
    } finally {
      for (const dir of this.gitDirs) this.acknowledge(path.join(dir, 'config'));
    }
  }

  /** Runs `fn` (an agent's command or a gate) with the control files watched; returns its result and what was restored. */
  async around<T>(during: string, fn: () => Promise<T>): Promise<{ result: T; restored: TamperFinding[] }> {
    if (this.depth++ === 0) {
      await this.settleNow(); // what a background process changed since the last command is not the new baseline
      this.storeWrites = this.options.store?.count() ?? 0;
      this.expected = await this.capture();
    }
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await fn() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const restored = --this.depth === 0 ? await this.check(during) : [];
    if (!outcome.ok) throw outcome.error;
    return { result: outcome.value, restored };
  }

  /**
   * A last look before a commit (and before the next command), for writes to git's config and
   * hooks that a process left running by a command made after it returned. Only git's files:
   * nobody else writes them mid-run, while a person may edit `.ralph/` files between commands.
   */
  async settle(): Promise<TamperFinding[]> {
    return this.depth > 0 ? [] : this.settleNow();
  }

  private async settleNow(): Promise<TamperFinding[]> {
    if (!this.expected) return [];
    const inGit = (file: string) => this.gitDirs.some((dir) => file.startsWith(`${dir}${path.sep}`));
    return this.check('a process left running by an earlier command', inGit);
  }

  /** Everything found since `begin`, for the iteration's feedback and report. */
  drain(): TamperFinding[] {
    const out = this.findings;
    this.findings = [];
    return out;
  }

  private async check(during: string, only: (file: string) => boolean = () => true): Promise<TamperFinding[]> {
    const expected = this.expected;
    if (!expected) return [];
    this.storeSince(expected);
    const actual = await this.capture();
    const found: TamperFinding[] = [];
    const watched = (file: string) => only(file) && !this.othersState(file);
    for (const file of new Set([...expected.keys(), ...actual.keys()])) {
      if (!watched(file)) continue;
      const before = expected.get(file);
      const after = actual.get(file);
      if (same(before, after) || this.ownLock(file, after)) continue;
      if (after?.kind === 'file' && file === this.options.store?.file && this.options.store.wrote(after.data)) {
        expected.set(file, after); // the store's own write, not yet acknowledged
        continue;
      }
      found.push({
        file: this.paths.relative(file),
        change: before === undefined ? 'created' : after === undefined ? 'deleted' : 'modified',
        during,
      });
    }
    if (found.length === 0) return [];
    const kept = await this.quarantine(found, actual).catch(() => undefined);
    let failure = '';
    try {
      await restore(expected, actual, watched);
    } catch (error) {
      failure = `; COULD NOT RESTORE ALL OF THEM (${errorMessage(error)}): check them before the next run`;
    }
    this.findings.push(...found);
    const names =
      found
        .slice(0, 8)
        .map((f) => `${f.file} (${f.change})`)
        .join(', ') + (found.length > 8 ? `, and ${found.length - 8} more` : '');
    this.emit({
      type: 'warning',
      taskId: this.context?.taskId,
      iteration: this.context?.iteration,
      code: 'tampering',
      message: `restored ${names}: changed while ${during} ran; control files are the orchestrator's${kept ? ` (the changed copies are in ${kept})` : ''}${failure}`,
    });
    return found;
  }

  /** The store wrote since the snapshot: its last write is what its file should hold (a restore never undoes the store). */
  private storeSince(expected: Snapshot): void {
    const store = this.options.store;
    const last = store?.last();
    if (!store || !last || store.count() === this.storeWrites) return;
    const before = expected.get(store.file);
    expected.set(store.file, { kind: 'file', data: last, mode: before?.kind === 'file' ? before.mode : 0o644 });
  }

  /** Another task's checkpoint, when only this task's own is watched. */
  private othersState(file: string): boolean {
    if (!this.options.ownStateOnly) return false;
    // the task store is written by every agent's loop and by the queue at any moment: watched
    // only when the guard can tell the store's own writes (`store`), else a restore from one
    // command's snapshot could undo another loop's write
    if (file === this.paths.tasks) return this.options.store === undefined;
    const rel = path.relative(this.paths.stateDir, file);
    // the folder itself too: the first checkpoint of any task creates it
    if (rel === '') return true;
    return !rel.startsWith('..') && !path.isAbsolute(rel) && rel !== `${this.context?.taskId}.json`;
  }

  /** A run lock naming this process was written by it (a refresh of its own lock). */
  private ownLock(file: string, entry: Entry | undefined): boolean {
    if (file !== this.paths.lock || entry?.kind !== 'file') return false;
    try {
      return (JSON.parse(entry.data.toString('utf8')) as { pid?: unknown }).pid === process.pid;
    } catch {
      return false;
    }
  }

  /** Keeps what the agent wrote, so nothing is lost if it was a person's edit after all. */
  private async quarantine(found: TamperFinding[], actual: Snapshot): Promise<string | undefined> {
    const base = this.context
      ? path.join(
          this.paths.reportsDir(this.context.taskId),
          'tampered',
          `iteration-${this.context.iteration}-${randomBytes(3).toString('hex')}`,
        )
      : path.join(this.paths.dir, 'runs', `tampered-${randomBytes(3).toString('hex')}`);
    let any = false;
    for (const f of found) {
      const entry = actual.get(path.resolve(this.paths.workspace, f.file));
      if (entry?.kind !== 'file') continue;
      // `.git`/`.ralph` segments renamed: a copy must not look like a repository or a control file
      const target = path.join(
        base,
        ...f.file
          .split('/')
          .filter((s) => s !== '..')
          .map((s) => s.replace(/^\./, 'dot-')),
      );
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, entry.data);
      any = true;
    }
    return any ? this.paths.relative(base) : undefined;
  }

  private async capture(): Promise<Snapshot> {
    const snapshot: Snapshot = new Map();
    const skip = (file: string) => this.notWatched(file);
    for (const root of this.roots) captureSync(root, snapshot, skip);
    return snapshot;
  }

  /**
   * Under `.ralph/` every file is watched but what the orchestrator writes while commands run
   * (the run log, reports and gate logs, observations, the store's lock and temporary files), the
   * tasks' worktrees (the agents' work) and the running task's own progress notes (with agents in
   * worktrees, any notes in the workspace).
   */
  private notWatched(file: string): boolean {
    const rel = path.relative(this.paths.dir, file);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return false;
    const [top, ...rest] = rel.split(path.sep);
    if (UNWATCHED_RALPH.has(top)) return true;
    const name = path.basename(file);
    if ((name.endsWith('.lock') && file !== this.paths.lock) || /^\..*\.(?:tmp|restore)$/.test(name)) return true;
    // with agents in worktrees the workspace's notes are what the merge queue lands there, at any moment
    if (top === 'progress' && this.options.ownStateOnly) return true;
    return top === 'progress' && rest.length === 1 && this.context !== undefined && file === this.paths.progress(this.context.taskId);
  }
}

/** Folders of `.ralph/` the orchestrator writes while commands run, or the agents' own work (worktrees). */
const UNWATCHED_RALPH = new Set(['runs', 'reports', 'worktrees', 'observations.md']);

function captureSync(file: string, into: Snapshot, skip: (file: string) => boolean): void {
  if (skip(file)) return;
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return; // absent: its creation is what would be noticed
  }
  if (stat.isSymbolicLink()) into.set(file, { kind: 'link', target: readlinkSync(file) });
  else if (stat.isFile()) into.set(file, { kind: 'file', data: readFileSync(file), mode: stat.mode & 0o7777 });
  else if (stat.isDirectory()) {
    into.set(file, { kind: 'dir', mode: stat.mode & 0o7777 });
    for (const name of safeReaddir(file)) captureSync(path.join(file, name), into, skip);
  } else into.set(file, { kind: 'other' });
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function same(a: Entry | undefined, b: Entry | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.mode === b.mode && a.data.equals(b.data);
  if (a.kind === 'dir' && b.kind === 'dir') return a.mode === b.mode;
  if (a.kind === 'link' && b.kind === 'link') return a.target === b.target;
  return true;
}

/** Puts `expected` back: created entries removed (deepest first), changed or deleted ones rewritten (shallowest first). */
async function restore(expected: Snapshot, actual: Snapshot, only: (file: string) => boolean): Promise<void> {
  const depth = (file: string) => file.split(path.sep).length;
  const created = [...actual.keys()].filter((f) => only(f) && !expected.has(f)).sort((a, b) => depth(b) - depth(a));
  for (const file of created) await fs.rm(file, { recursive: true, force: true });
  const changed = [...expected.keys()].filter((f) => only(f) && !same(expected.get(f), actual.get(f))).sort((a, b) => depth(a) - depth(b));
  for (const file of changed) {
    const want = expected.get(file) as Entry;
    const have = actual.get(file);
    if (have && (have.kind !== want.kind || want.kind !== 'dir')) await fs.rm(file, { recursive: true, force: true });
    await fs.mkdir(path.dirname(file), { recursive: true });
    if (want.kind === 'dir') {
      await fs.mkdir(file, { recursive: true });
      await fs.chmod(file, want.mode);
    } else if (want.kind === 'link') {
      await fs.symlink(want.target, file);
    } else if (want.kind === 'file') {
      const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.restore`);
      await fs.writeFile(temp, want.data, { mode: want.mode });
      await fs.chmod(temp, want.mode);
      await fs.rename(temp, file);
    }
  }
}

/** The repository's git directory and, for a linked worktree, the common one (config and hooks live there). */
function gitDirs(workspace: string): string[] {
  const dotGit = path.join(workspace, '.git');
  try {
    if (lstatSync(dotGit).isDirectory()) return [dotGit];
    const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    if (!pointer) return [];
    const dir = path.resolve(workspace, pointer);
    let common: string | undefined;
    try {
      common = path.resolve(dir, readFileSync(path.join(dir, 'commondir'), 'utf8').trim());
    } catch {
      common = undefined;
    }
    return common && common !== dir ? [dir, common] : [dir];
  } catch {
    return [];
  }
}

/**
 * The floor an iteration's orchestrator overhead is compared with (issue #11): what no
 * iteration can do without, measured in the same process, on the same disk, at the same time
 * as the loop it is compared with (one sample inside every iteration's model call, whose time
 * the overhead excludes), so that the ratio holds on a shared, noisy machine.
 *
 * The floor is one `git status` (the very command the loop runs to learn whether there is work
 * to commit, run the same way: `gitStatus`, with the same hardened `-c` flags, through simple-git
 * in the git helper process) and the fsync'd
 * atomic writes of the state an iteration needs, at the real files' sizes: the checkpoint at
 * the iteration's start, the write-ahead checkpoint before its commit, the checkpoint at its
 * end, and the task's record in the task store. Each write is the least an atomic write can
 * be: temp file, write, fsync (off the event loop: an editor's extension host must not wait on
 * the disk), close, rename.
 *
 * The floor takes them one after another. The loop overlaps what has no order between its
 * parts (the commit's `git status` with the write-ahead checkpoint; the end checkpoint with the
 * iteration report and the task store's record), so its cycle can come closer to the floor
 * than the extra files it writes (the report, the store's lock, the checkpoint's backup link)
 * would otherwise allow; what the ratio measures is the orchestrator's own cost per iteration
 * as a person waits for it, against this fixed yardstick.
 */
import { closeSync, fsync, openSync, promises as fs, renameSync, writeSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gitStatus } from '../src/core/git/gitExec';

/** The state writes of one iteration, by the file each copies the size and content of. */
export const FLOOR_WRITES = ['checkpoint (start)', 'checkpoint (write-ahead)', 'checkpoint (end)', 'task store'] as const;

export class FloorSampler {
  readonly samples: number[] = [];
  private scratch: string | undefined;

  constructor(
    private readonly workspace: string,
    private readonly checkpointFile: string,
    private readonly storeFile: string,
  ) {}

  /** One floor measurement; its time is returned and recorded. */
  async sample(): Promise<number> {
    this.scratch ??= await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-floor-'));
    const checkpoint = await fs.readFile(this.checkpointFile).catch(() => Buffer.from('{}\n'));
    const store = await fs.readFile(this.storeFile).catch(() => Buffer.from('{}\n'));
    const started = performance.now();
    await statusOf(this.workspace);
    await atomicWrite(path.join(this.scratch, 'state.json'), checkpoint);
    await atomicWrite(path.join(this.scratch, 'state.json'), checkpoint);
    await atomicWrite(path.join(this.scratch, 'state.json'), checkpoint);
    await atomicWrite(path.join(this.scratch, 'tasks.json'), store);
    const ms = performance.now() - started;
    this.samples.push(ms);
    return ms;
  }

  async dispose(): Promise<void> {
    if (this.scratch) await fs.rm(this.scratch, { recursive: true, force: true });
  }
}

async function statusOf(cwd: string): Promise<void> {
  // run the way the loop runs it (gitStatus: the hardened options, simple-git in the helper process)
  await gitStatus(cwd, ['--untracked-files=all', '--', '.', ':(exclude).ralph/tasks.json', ':(exclude).ralph/config.json']);
}

/** The least an fsync'd atomic write can be without blocking the event loop on the disk: only the fsync waits off the thread. */
async function atomicWrite(file: string, data: Buffer): Promise<void> {
  const temp = `${file}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, data);
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

const fsyncAsync = promisify(fsync);

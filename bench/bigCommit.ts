/**
 * Memory of a big iteration's commit (issue 48): an agent created 100,000 small files in a few
 * nested folders, and the loop commits them as it commits every iteration — a `git status` for
 * whether anything changed, then `GitService.commitAll` with the run's secret guard (stage
 * everything but Ralph's bookkeeping, read what is staged with the patch the guard looks in,
 * commit). The commit runs in a fresh Node process of its own, as the orchestrator's would, and
 * its git runs from the git helper process (gitHost.ts): the figures are the peak resident memory
 * (VmHWM) of each of the two, their CPU-seconds (the helper's with its git processes) and the wall
 * time. The budget is the larger of the two peaks: ≤ 150 MB; over it, the bench fails.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SecretRedactor } from '../src/core/commands/secrets';
import { gitHostPid, startGitHost } from '../src/core/git/gitHost';
import { GitService } from '../src/core/git/gitService';

export const BIG_COMMIT_FILES = 100_000;
export const BIG_COMMIT_BUDGET_MB = 150;
const MB = 2 ** 20;

export interface BigCommitResult {
  files: number;
  /** Files the commit reported it took, and the files of the committed tree. */
  committed: number;
  treeFiles: number;
  /** The committed tree: the same input gives the same tree, whatever the commit path does inside. */
  tree: string;
  /** Peak resident memory (VmHWM) of the committing process and of the git helper process, MB. */
  peakMb: { orchestrator: number; helper: number };
  /** The committing process's resident memory before the commit (its Node and modules), MB. */
  startMb: number;
  wallMs: number;
  /** CPU-seconds of the commit: the committing process's, the helper's with the git processes it ran. */
  cpuSeconds: { orchestrator: number; helper: number };
  budgetMb: number;
}

/** The 100,000 files: `data/<a>/<b>/f<i>.txt`, 10 × 10 folders of 1,000 files, each a line of its own. */
async function writeFiles(dir: string, count: number): Promise<void> {
  for (let a = 0; a < 10; a++) {
    for (let b = 0; b < 10; b++) {
      const folder = path.join(dir, 'data', `a${a}`, `b${b}`);
      await fs.mkdir(folder, { recursive: true });
      const writes: Promise<void>[] = [];
      for (let i = (a * 10 + b) * (count / 100); i < (a * 10 + b + 1) * (count / 100); i++) {
        writes.push(fs.writeFile(path.join(folder, `f${i}.txt`), `file ${i}\n`));
      }
      await Promise.all(writes);
    }
  }
}

function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', maxBuffer: 256 * MB });
}

export async function benchBigCommit(
  count = Number(process.env.RALPH_BENCH_BIG_COMMIT_FILES ?? BIG_COMMIT_FILES),
): Promise<BigCommitResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-bigcommit-'));
  try {
    gitIn(dir, 'init', '-q');
    gitIn(dir, 'config', 'user.name', 'Bench');
    gitIn(dir, 'config', 'user.email', 'bench@localhost');
    await fs.writeFile(path.join(dir, 'README.md'), '# bench\n');
    await fs.writeFile(path.join(dir, '.gitignore'), 'node_modules/\n');
    await fs.mkdir(path.join(dir, '.ralph', 'state'), { recursive: true });
    await fs.writeFile(path.join(dir, '.ralph', 'tasks.json'), '{"tasks":[]}\n');
    await fs.writeFile(path.join(dir, '.ralph', 'state', 'T-001.json'), '{}\n');
    gitIn(dir, 'add', 'README.md', '.gitignore');
    gitIn(dir, 'commit', '-q', '-m', 'start');
    await writeFiles(dir, count);
    const child = await new Promise<ChildFigures>((resolve, reject) => {
      execFile(process.execPath, [__filename, '--commit-in', dir], { maxBuffer: 16 * MB }, (error, stdout, stderr) => {
        if (error) reject(new Error(`the big commit failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as ChildFigures);
      });
    });
    const treeFiles = gitIn(dir, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n').filter(Boolean).length;
    return { files: count, ...child, treeFiles, tree: gitIn(dir, 'rev-parse', 'HEAD^{tree}').trim(), budgetMb: BIG_COMMIT_BUDGET_MB };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

type ChildFigures = Pick<BigCommitResult, 'committed' | 'peakMb' | 'startMb' | 'wallMs' | 'cpuSeconds'>;

/** A process's peak and current resident memory (MB) and CPU-seconds with its waited children, from /proc (Linux). */
function procFigures(pid: number | 'self'): { peakMb: number; rssMb: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  // after the command name (in parentheses, which may hold spaces): fields 14–17 are utime, stime, cutime, cstime
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
  return { peakMb: kb('VmHWM'), rssMb: kb('VmRSS'), cpuSeconds: ticks / 100 };
}

/** The committing process: what `iterationStep` and `commitIteration` do with the run's GitService. */
async function commitIn(dir: string): Promise<void> {
  const git = new GitService(dir, new SecretRedactor(['sk-bench-0123456789abcdef0123456789']));
  startGitHost();
  await git.headSha(); // the helper is up, as it is by a run's first iteration
  const helperPid = gitHostPid();
  const start = procFigures('self');
  const helperStart = helperPid ? procFigures(helperPid) : undefined;
  const began = performance.now();
  const changed = await git.hasChangesToCommit();
  const commit = await git.commitAll('ralph(T-001): iteration 1', changed);
  const wallMs = performance.now() - began;
  const self = procFigures('self');
  const helper = helperPid ? procFigures(helperPid) : undefined;
  const figures: ChildFigures = {
    committed: commit?.files.length ?? 0,
    peakMb: { orchestrator: self.peakMb, helper: helper?.peakMb ?? NaN },
    startMb: start.rssMb,
    wallMs,
    cpuSeconds: {
      orchestrator: self.cpuSeconds - start.cpuSeconds,
      helper: (helper?.cpuSeconds ?? NaN) - (helperStart?.cpuSeconds ?? NaN),
    },
  };
  console.log(JSON.stringify(figures));
}

/** The section's lines, with the budget; `over` when a peak is over it. */
export function bigCommitLines(r: BigCommitResult): string[] {
  const peak = Math.max(r.peakMb.orchestrator, r.peakMb.helper);
  return [
    `big commit: an iteration that created ${r.files.toLocaleString('en-US')} files (10 × 10 folders), committed by the loop's commit path (status, stage, staged diff with the secret guard, commit): ${r.committed.toLocaleString('en-US')} files committed, ${r.treeFiles.toLocaleString('en-US')} in the tree`,
    `  peak resident memory: committing process ${r.peakMb.orchestrator.toFixed(0)} MB (${r.startMb.toFixed(0)} MB before the commit), git helper ${r.peakMb.helper.toFixed(0)} MB; budget ≤ ${r.budgetMb} MB: ${peak <= r.budgetMb ? 'within' : 'OVER'}`,
    `  ${(r.wallMs / 1000).toFixed(2)} s wall, ${r.cpuSeconds.orchestrator.toFixed(2)} CPU-s committing process, ${r.cpuSeconds.helper.toFixed(2)} CPU-s helper and git`,
  ];
}

/** Whether the big commit kept within its memory budget. */
export function bigCommitWithinBudget(r: BigCommitResult): boolean {
  return Math.max(r.peakMb.orchestrator, r.peakMb.helper) <= r.budgetMb && r.committed === r.files;
}

const at = process.argv.indexOf('--commit-in');
if (at >= 0 && require.main === module) {
  commitIn(process.argv[at + 1]).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

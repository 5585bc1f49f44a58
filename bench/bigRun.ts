/**
 * Memory of a whole `ralph run` whose iteration created 100,000 files (issue 48): the built CLI
 * (dist/cli.js, as people run it), the built-in agent against the scripted server, one task whose
 * agent runs the project's own generator (`node gen.js`, committed before the task: 10 × 10
 * folders of 1,000 one-line files), then COMPLETE; no gate. The run commits the iteration as it
 * commits every one. Measured: the peak resident memory (VmHWM) of the `ralph run` process and of
 * its git helper — each Node process of the run reports its own as it exits (peakProbe.ts) — and
 * the committed tree. Beside it, the CLI's own start: the peaks of `ralph --version` and
 * `ralph status`. The budget is the run's CLI process: ≤ 150 MB, every file committed, or the
 * bench fails. `node out/bench/bigRun.js [--cli <dist/cli.js>]` runs it alone (another build).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { startScriptedServer } from '../test/fixtures/scriptedServer';
import { CLI, CLI_ENV } from '../test/unit/helpers/cliHarness';
import { TEST_KEY_ENV } from '../test/unit/helpers/loopHarness';
import { makeTempWorkspace } from '../test/unit/helpers/tempWorkspace';
import { BIG_COMMIT_BUDGET_MB, BIG_COMMIT_FILES } from './bigCommit';

const PROBE = path.join(__dirname, 'peakProbe.js');

export interface BigRunResult {
  files: number;
  /** How the task ended, and the files of the tree the run committed. */
  status: string;
  treeFiles: number;
  /** Peak resident memory (VmHWM), MB: the `ralph run` process and its git helper. */
  peakMb: { cli: number; helper: number };
  /** The CLI's own start: the peaks of `ralph --version` and `ralph status` (in the same project), MB. */
  startMb: { version: number; status: number };
  wallMs: number;
  budgetMb: number;
}

/** The project's generator: `count` one-line files in `data/a<0-9>/b<0-9>/`, as bigCommit.ts writes them. */
const generator = (count: number) =>
  [
    "const fs = require('fs');",
    'for (let a = 0; a < 10; a++) for (let b = 0; b < 10; b++) {',
    '  const dir = `data/a${a}/b${b}`;',
    '  fs.mkdirSync(dir, { recursive: true });',
    `  for (let i = (a * 10 + b) * ${count / 100}; i < (a * 10 + b + 1) * ${count / 100}; i++) fs.writeFileSync(\`\${dir}/f\${i}.txt\`, \`file \${i}\\n\`);`,
    '}',
    '',
  ].join('\n');

/** `node <cli> …` in `cwd` with every Node process's peak appended to `peaks`; its output and the peaks by script. */
function ralph(
  cli: string,
  args: string[],
  cwd: string,
  peaks: string,
): Promise<{ code: number; out: string; peakKb: Map<string, number> }> {
  const env = { ...CLI_ENV, NODE_OPTIONS: `--require ${PROBE}`, RALPH_BENCH_PEAK_FILE: peaks };
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd, env, maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      void fs
        .readFile(peaks, 'utf8')
        .catch(() => '')
        .then(async (text) => {
          await fs.rm(peaks, { force: true });
          const peakKb = new Map<string, number>();
          for (const line of text.split('\n').filter(Boolean)) {
            const at = line.lastIndexOf(' ');
            const script = path.basename(line.slice(0, at));
            peakKb.set(script, Math.max(peakKb.get(script) ?? 0, Number(line.slice(at + 1))));
          }
          resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr, peakKb });
        });
    });
  });
}

export async function benchBigRun(
  cli = CLI,
  count = Number(process.env.RALPH_BENCH_BIG_COMMIT_FILES ?? BIG_COMMIT_FILES),
): Promise<BigRunResult> {
  const server = await startScriptedServer({
    loop: true,
    steps: [
      (request) =>
        (request.body?.messages ?? []).some((m) => m.role === 'tool')
          ? { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'generated', promiseEvidence: 'data/' } }] }
          : { toolCalls: [{ name: 'run_command', arguments: { command: 'node gen.js' } }] },
    ],
  });
  const ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# bench\n', 'gen.js': generator(count) } });
  const peaks = path.join(path.dirname(ws.dir), `peaks-${path.basename(ws.dir)}.txt`);
  const name = path.basename(cli);
  try {
    const init = await ralph(cli, ['init'], ws.dir, peaks);
    if (init.code !== 0) throw new Error(`ralph init failed: ${init.out}`);
    const llm = { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['scripted-model'], maxRetries: 0 };
    await fs.writeFile(ws.path('.ralph/config.json'), `${JSON.stringify({ llm, gates: [], loop: { maxIterations: 2 } }, null, 2)}\n`);
    ws.git('add', '-A');
    ws.git('commit', '-qm', 'ralph init');
    const added = await ralph(
      cli,
      ['task', 'add', 'Generate', '--prompt', 'Run node gen.js', '--promise', 'data/ holds the files'],
      ws.dir,
      peaks,
    );
    if (added.code !== 0) throw new Error(`ralph task add failed: ${added.out}`);
    const version = await ralph(cli, ['--version'], ws.dir, peaks);
    const status = await ralph(cli, ['status'], ws.dir, peaks);
    const started = performance.now();
    const run = await ralph(cli, ['run'], ws.dir, peaks);
    const wallMs = performance.now() - started;
    const ended = JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0]?.status ?? 'missing';
    if (run.code !== 0 || ended !== 'done') throw new Error(`the big run's task ended ${ended} (exit ${run.code}):\n${run.out}`);
    const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', 'HEAD', 'data'], {
      cwd: ws.dir,
      encoding: 'utf8',
      maxBuffer: 256 * 2 ** 20,
    });
    const treeFiles = tree.split('\n').filter(Boolean).length;
    const mb = (r: { peakKb: Map<string, number> }, script: string) => (r.peakKb.get(script) ?? NaN) / 1024;
    return {
      files: count,
      status: ended,
      treeFiles,
      peakMb: { cli: mb(run, name), helper: mb(run, 'gitHostMain.js') },
      startMb: { version: mb(version, name), status: mb(status, name) },
      wallMs,
      budgetMb: BIG_COMMIT_BUDGET_MB,
    };
  } finally {
    await server.close();
    await ws.cleanup();
    await fs.rm(peaks, { force: true });
  }
}

/** The section's lines, with the budget. */
export function bigRunLines(r: BigRunResult): string[] {
  return [
    `big run: a whole \`ralph run\` (the built CLI) of one iteration whose command created ${r.files.toLocaleString('en-US')} files: task ${r.status}, ${r.treeFiles.toLocaleString('en-US')} files committed, ${(r.wallMs / 1000).toFixed(1)} s`,
    `  peak resident memory: the ralph run process ${r.peakMb.cli.toFixed(0)} MB, its git helper ${r.peakMb.helper.toFixed(0)} MB; budget ≤ ${r.budgetMb} MB: ${bigRunWithinBudget(r) ? 'within' : 'OVER'}`,
    `  the CLI's start alone: ralph --version ${r.startMb.version.toFixed(0)} MB, ralph status ${r.startMb.status.toFixed(0)} MB`,
  ];
}

/** Whether the whole run kept within the budget and committed every file. */
export function bigRunWithinBudget(r: BigRunResult): boolean {
  return r.peakMb.cli <= r.budgetMb && r.treeFiles === r.files;
}

if (require.main === module) {
  const at = process.argv.indexOf('--cli');
  benchBigRun(at >= 0 ? path.resolve(process.argv[at + 1]) : CLI).then(
    (r) => console.log(JSON.stringify(r)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

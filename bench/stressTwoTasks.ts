/**
 * The flake of issue 23, chased: two parallel tasks on real git that should both land cleanly,
 * with a task time limit of 3 s (as in the report: one task ended `timeout` after 3 s, its
 * worktree at its first commit, about once in fourteen runs). Runs the case N times
 * (`node out/bench/stressTwoTasks.js [N]`) and prints, for every run that did not end with both
 * tasks done, each task's status, reason and timeline, and its worktree's commits.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseConfig } from '../src/core/config/load';
import { EventBus, type RalphEvent } from '../src/core/events';
import { createModelClient } from '../src/core/llm/factory';
import { RalphRunner } from '../src/core/loop/run/runner';
import { RalphPaths } from '../src/core/paths';
import { NodeCommandRunner } from '../src/core/commands/processRunner';
import { TaskStore } from '../src/core/tasks/store';
import { type Step, startScriptedServer } from '../test/fixtures/scriptedServer';

const agent: Step = async (request) => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
  const file = /WRITE (\S+)/.exec(typeof user?.content === 'string' ? user.content : '')?.[1] ?? 'x.txt';
  if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'written', promiseEvidence: file } }] };
  return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }] };
};

async function once(n: number): Promise<string | undefined> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-stress-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'stress');
  git('config', 'user.email', 'stress@localhost');
  await fs.writeFile(path.join(dir, 'README.md'), '# stress\n');
  git('add', '-A');
  git('commit', '-qm', 'init');
  const server = await startScriptedServer({ loop: true, steps: [agent] });
  const config = parseConfig({
    llm: { baseUrl: server.url, models: ['m'], maxRetries: 0 },
    loop: { maxParallel: 2, maxIterations: 3, taskTimeoutMinutes: 0.05 },
    gates: [{ name: 'ok', kind: 'custom', command: 'true', required: true }],
  });
  const store = new TaskStore(new RalphPaths(dir));
  for (const f of ['a.txt', 'b.txt']) await store.add({ title: `write ${f}`, prompt: `WRITE ${f}`, promise: `${f} exists` });
  const bus = new EventBus();
  const events: { at: number; e: RalphEvent }[] = [];
  const t0 = performance.now();
  bus.subscribe((e) => events.push({ at: performance.now() - t0, e }));
  try {
    const summary = await new RalphRunner({
      workspace: dir,
      config,
      bus,
      model: createModelClient(config.llm, 'k'),
      commands: new NodeCommandRunner(),
      store,
    }).run();
    const bad = summary.results.filter((r) => r.status !== 'done');
    if (bad.length === 0) return undefined;
    const lines = [`run ${n}: ${summary.results.map((r) => `${r.taskId} ${r.status}`).join(', ')}`];
    for (const r of bad) {
      lines.push(`  ${r.taskId}: ${r.reason}`);
      const wt = path.join(dir, '.ralph', 'worktrees', r.taskId);
      lines.push(
        `  worktree commits: ${(await fs.stat(wt).catch(() => undefined)) ? execFileSync('git', ['log', '--oneline', '-5'], { cwd: wt, encoding: 'utf8' }).trim().replace(/\n/g, ' | ') : '(no worktree)'}`,
      );
      for (const { at, e } of events.filter((x) => 'taskId' in x.e && x.e.taskId === r.taskId))
        lines.push(`    ${(at / 1000).toFixed(2)} ${e.type} ${JSON.stringify(e).slice(0, 160)}`);
    }
    return lines.join('\n');
  } finally {
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 20);
  let failed = 0;
  for (let n = 1; n <= runs; n++) {
    const report = await once(n);
    if (report) {
      failed++;
      console.log(report);
    }
  }
  console.log(`${runs - failed} of ${runs} runs ended with both tasks done`);
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});

/**
 * The parallel end-to-end scenario: three tasks for three agents against one scripted model
 * server. Each agent's first call writes its file and reports PROGRESS:50; its second waits
 * until all three got there (three at once) and until the test releases that task. The required
 * gate passes at once in a task's worktree; in the merge queue's worktree (the merged check) it
 * waits for the release file, so the queue can be looked at mid-check. The file lies in the
 * workspace (`.ralph/runs`): the sandbox gives commands a private /tmp but shows the merge
 * worktree's main workspace read-only, even under /tmp (a file beside the repository would be
 * hidden when the repository itself is cloned under /tmp).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type RecordedRequest, type ScriptedServer, startScriptedServer, type Step } from '../fixtures/scriptedServer';

export const PARALLEL_KEY_ENV = 'RALPH_E2E_PARALLEL_KEY';
export const PARALLEL_TASKS = [
  { id: 'T-001', title: 'Add the login form', file: 'login.txt' },
  { id: 'T-002', title: 'Signup endpoint', file: 'signup.txt' },
  { id: 'T-003', title: 'Password reset mail', file: 'reset.txt' },
] as const;

const gateJs = (release: string) => `const fs = require('fs'); const path = require('path');
if (path.basename(process.cwd()) !== '_merge') { console.log('3 passed, 0 failed'); process.exit(0); }
const release = ${JSON.stringify(release)};
// the release decides (the test's, or its teardown's); the 10 minutes only keep an editor killed mid-check from leaving it behind
const until = Date.now() + 600000;
(function wait() {
  if (fs.existsSync(release)) { console.log('4 passed, 0 failed'); process.exit(0); }
  if (Date.now() > until) { console.log('the merged check was never released'); process.exit(1); }
  setTimeout(wait, 100);
})();
`;

export interface ParallelScenario {
  server: ScriptedServer;
  /** Resolves once every agent holds its second call. */
  allThere: Promise<void>;
  release(taskId: string): void;
  releaseAll(): void;
}

export async function startParallelScenario(): Promise<ParallelScenario> {
  const releases = new Map<string, () => void>();
  const released = new Map(PARALLEL_TASKS.map((t) => [t.id as string, new Promise<void>((resolve) => releases.set(t.id, resolve))]));
  const there = new Set<string>();
  let everyone!: () => void;
  const allThere = new Promise<void>((resolve) => (everyone = resolve));
  const step: Step = async (request: RecordedRequest) => {
    const messages = request.body?.messages ?? [];
    const user = messages.find((m) => m.role === 'user');
    const text = typeof user?.content === 'string' ? user.content : '';
    const task = PARALLEL_TASKS.find((t) => text.includes(`TASK ${t.id} `));
    if (!task) throw new Error(`no task in the request: ${text.slice(0, 200)}`);
    if (messages.at(-1)?.role !== 'tool') {
      return {
        content: `Writing ${task.file}. <ralph>PROGRESS:50</ralph>`,
        toolCalls: [{ name: 'write_file', arguments: { path: task.file, content: `${task.title}\n` } }],
      };
    }
    there.add(task.id);
    if (there.size === PARALLEL_TASKS.length) everyone();
    await allThere;
    await released.get(task.id);
    return {
      toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${task.file}`, promiseEvidence: `${task.file} exists` } }],
    };
  };
  const server = await startScriptedServer({ steps: Array.from({ length: 20 }, () => step) });
  return {
    server,
    allThere,
    release: (id) => releases.get(id)?.(),
    releaseAll: () => {
      for (const r of releases.values()) r();
    },
  };
}

/** The workspace: the gate, the config (3 agents) and the three tasks, committed. */
export function prepareParallelWorkspace(workspace: string, serverUrl: string, releaseFile: string): void {
  fs.writeFileSync(path.join(workspace, 'gate.js'), gateJs(releaseFile));
  fs.mkdirSync(path.join(workspace, '.ralph'), { recursive: true });
  const config = {
    llm: { baseUrl: serverUrl, apiKeyEnv: PARALLEL_KEY_ENV, models: ['scripted-model'], maxRetries: 0, requestTimeoutMs: 600_000 },
    loop: { maxIterations: 5, maxParallel: 3 },
    // the gate answers by where it runs (it waits in the merge worktree): a result no other tree can stand for
    gates: [{ name: 'unit', command: 'node gate.js', kind: 'tests', required: true, reuse: false }],
  };
  fs.writeFileSync(path.join(workspace, '.ralph', 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const now = new Date().toISOString();
  const tasks = PARALLEL_TASKS.map((t, i) => ({
    id: t.id,
    title: t.title,
    prompt: `TASK ${t.id} writes ${t.file}`,
    promise: `${t.file} exists`,
    status: 'todo',
    priority: i + 1,
    iterations: 0,
    createdAt: now,
    updatedAt: now,
  }));
  fs.writeFileSync(path.join(workspace, '.ralph', 'tasks.json'), `${JSON.stringify({ version: 1, tasks }, null, 2)}\n`);
  fs.writeFileSync(path.join(workspace, '.ralph', '.gitignore'), 'state/\nruns/\nreports/\nworktrees/\nrun.lock\n*.lock\n*.tmp\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, stdio: 'ignore' });
  git('add', '-A');
  git('commit', '-q', '--no-verify', '-m', 'e2e: parallel tasks, gate and config');
}

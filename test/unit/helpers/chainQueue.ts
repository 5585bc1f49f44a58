import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import type { GateConfig } from '../../../src/core/config/schema';
import type { RalphEvent, RalphEventBody } from '../../../src/core/events';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import type { WorktreeManager } from '../../../src/core/git/worktrees';
import { MergeQueue } from '../../../src/core/loop/merge/mergeQueue';
import type { TempWorkspace } from './tempWorkspace';

type QueueDeps = ConstructorParameters<typeof MergeQueue>[0];

/** The merge queue of the chain tests on real git: `gate` required, 3 checks at once onto `main`, its events kept in `events`. */
export function chainQueue(wt: WorktreeManager, events: RalphEvent[], gate: GateConfig, overrides: Partial<QueueDeps> = {}): MergeQueue {
  let seq = 0;
  const emit = (body: RalphEventBody) => void events.push({ ...body, runId: 'r', seq: ++seq, time: '' } as RalphEvent);
  return new MergeQueue({
    worktrees: wt,
    gates: new ProcessGateRunner(new NodeCommandRunner()),
    gateConfigs: [gate],
    target: 'main',
    strategy: 'squash',
    concurrency: 3,
    emit,
    ...overrides,
  });
}

/** Commits `files` on `ralph/<taskId>` in its worktree (made from `main` unless it exists). */
export async function taskWork(ws: TempWorkspace, wt: WorktreeManager, taskId: string, files: Record<string, string>): Promise<void> {
  const dir = (await fs.stat(wt.pathFor(taskId)).catch(() => undefined)) ? wt.pathFor(taskId) : (await wt.create(taskId, 'main')).path;
  for (const [rel, content] of Object.entries(files)) await fs.writeFile(path.join(dir, rel), content);
  ws.git('-C', dir, 'add', '-A');
  ws.git('-C', dir, 'commit', '-q', '-m', `ralph(${taskId}): work`);
}

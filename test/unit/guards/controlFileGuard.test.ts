import assert from 'node:assert/strict';
import { promises as fs, lstatSync, readlinkSync } from 'node:fs';
import type { RalphEventBody } from '../../../src/core/events';
import { RalphPaths } from '../../../src/core/paths';
import { ControlFileGuard } from '../../../src/core/guards/controlFileGuard';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { TaskStore } from '../../../src/core/tasks/store';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('ControlFileGuard', () => {
  let ws: TempWorkspace;
  let paths: RalphPaths;
  let warnings: RalphEventBody[];
  let guard: ControlFileGuard;
  const sh = (command: string) => new NodeCommandRunner().run({ command, cwd: ws.dir, timeoutMs: 10000, maxOutputChars: 10000 });

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# x\n', '.ralph/config.json': '{"loop":{"maxIterations":3}}\n' } });
    paths = new RalphPaths(ws.dir);
    warnings = [];
    guard = new ControlFileGuard(paths, (body) => warnings.push(body));
    guard.begin('T-001', 1);
  });
  afterEach(async () => ws.cleanup());

  it('restores files, modes, links and folders exactly, whatever the command did to them', async () => {
    await fs.mkdir(paths.stateDir, { recursive: true });
    await fs.writeFile(paths.state('T-001'), '{"iteration":1}');
    const hooksBefore = (await fs.readdir(ws.path('.git/hooks'))).sort();
    const { restored } = await guard.around('`vandal`', () =>
      sh(
        'rm -rf .ralph/state && mkdir .ralph/state.x && ln -sfn /tmp .ralph/tasks.json && chmod 600 .ralph/config.json && rm -rf .git/hooks && mkdir .git/hooks && echo x > .git/hooks/pre-push && mkdir -p .git/info && echo "*" >> .git/info/exclude',
      ),
    );
    assert.ok(restored.length >= 5, JSON.stringify(restored));
    assert.equal(await fs.readFile(paths.state('T-001'), 'utf8'), '{"iteration":1}');
    assert.equal(ws.exists('.ralph/tasks.json'), false, 'a file that did not exist is removed again (a link here)');
    assert.equal(lstatSync(paths.config).mode & 0o777, 0o644);
    assert.deepEqual((await fs.readdir(ws.path('.git/hooks'))).sort(), hooksBefore);
    assert.doesNotMatch(await fs.readFile(ws.path('.git/info/exclude'), 'utf8'), /^\*$/m);
    assert.equal(ws.exists('.ralph/state.x'), false, "every file under .ralph/ is the orchestrator's: one made there is removed");
    assert.equal(warnings.length, 1);
    assert.equal((warnings[0] as { code: string }).code, 'tampering');
  });

  it('puts back a symbolic link the command replaced', async () => {
    await fs.mkdir(paths.stateDir, { recursive: true });
    await fs.symlink('elsewhere', paths.state('link'));
    await guard.around('`x`', () => sh('rm .ralph/state/link && echo hi > .ralph/state/link'));
    assert.equal(readlinkSync(paths.state('link')), 'elsewhere');
  });

  it("watches every file under .ralph/ but the run log, reports, worktrees and the running task's own notes (issue 48)", async () => {
    await ws.write('.ralph/progress/T-001.md', 'mine\n');
    await ws.write('.ralph/progress/T-002.md', 'the other task\n');
    await ws.write('.ralph/worktrees/T-002/work.txt', 'w\n');
    const { restored } = await guard.around('`scribble`', () =>
      sh(
        [
          'echo forged > .ralph/progress/T-002.md',
          'echo mine2 > .ralph/progress/T-001.md',
          'echo new > .ralph/extra.json',
          'mkdir -p .ralph/runs .ralph/reports/T-001 && echo log > .ralph/runs/r.ndjson && echo r > .ralph/reports/T-001/x.md',
          'echo w2 > .ralph/worktrees/T-002/work.txt',
          'echo x >> .ralph/.gitignore',
        ].join(' && '),
      ),
    );
    assert.deepEqual(restored.map((f) => `${f.file} ${f.change}`).sort(), [
      '.ralph/.gitignore created',
      '.ralph/extra.json created',
      '.ralph/progress/T-002.md modified',
    ]);
    assert.equal(await ws.read('.ralph/progress/T-002.md'), 'the other task\n');
    assert.equal(await ws.read('.ralph/progress/T-001.md'), 'mine2\n', "the running task's notes are its own");
    assert.equal(await ws.read('.ralph/worktrees/T-002/work.txt'), 'w2\n', "a worktree is an agent's work, not a record");
    assert.equal(ws.exists('.ralph/runs/r.ndjson'), true);
  });

  it("watches the task store for a task in a worktree too, taking the store's own unacknowledged write as its own", async () => {
    const store = new TaskStore(paths);
    await store.add({ title: 'a', prompt: 'p', promise: 'q', maxIterations: 2 });
    const parallel = new ControlFileGuard(paths, (body) => warnings.push(body), {
      ownStateOnly: true,
      store: { file: paths.tasks, ...store.own },
    });
    parallel.begin('T-001', 1);
    const own = await parallel.around('`other agent`', async () => {
      await store.update('T-001', { title: 'renamed by the loop of another agent' });
      return sh('true');
    });
    assert.deepEqual(own.restored, [], 'no acknowledgement reached the guard, yet the write is known as the store own');
    const forged = await parallel.around('`node -e`', async () => {
      // another agent's loop writes the store while this command runs: the restore keeps its write
      await store.update('T-001', { title: 'renamed again meanwhile' });
      return sh(
        `node -e "const f=require('fs'),p='.ralph/tasks.json',s=JSON.parse(f.readFileSync(p));s.tasks[0].maxIterations=5;s.tasks[0].promise='FORGED';f.writeFileSync(p,JSON.stringify(s))"`,
      );
    });
    assert.deepEqual(
      forged.restored.map((f) => f.file),
      ['.ralph/tasks.json'],
    );
    const [task] = await new TaskStore(paths).list();
    assert.equal(task.maxIterations, 2);
    assert.equal(task.promise, 'q');
    assert.equal(task.title, 'renamed again meanwhile', "the store's own copy, newer than the command's snapshot");
  });

  it("takes the task store's own writes during a command as expected, and nothing else", async () => {
    const store = new TaskStore(paths);
    store.onDidChange(() => guard.acknowledge(paths.tasks));
    await store.add({ title: 'a', prompt: 'p', promise: 'q' });
    const { restored } = await guard.around('`sleep`', async () => {
      const result = await sh('sleep 0.1');
      await store.add({ title: 'added by a person in the editor', prompt: 'p', promise: 'q' });
      return result;
    });
    assert.deepEqual(restored, []);
    assert.equal((await store.list()).length, 2);
    assert.equal(warnings.length, 0);
  });

  it('catches a hook a background process writes after its command returned, before the commit', async () => {
    await guard.around('`spawn`', () => sh('true'));
    // what a process the command left behind writes later (written here: its timing is not the point)
    await fs.writeFile(ws.path('.git/hooks/post-commit'), '#!/bin/sh\ntouch ran\n', { mode: 0o755 });
    await fs.writeFile(paths.tasks, '{"version":1,"tasks":[]}'); // between commands: a person's edit, left alone
    const late = await guard.orchestratorCommit(async () => 'committed');
    assert.equal(late, 'committed');
    assert.equal(ws.exists('.git/hooks/post-commit'), false);
    assert.equal(ws.exists('.ralph/tasks.json'), true);
    assert.deepEqual(
      guard.drain().map((f) => f.file),
      ['.git/hooks/post-commit'],
    );
  });
});

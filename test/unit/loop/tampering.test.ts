import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

/** A script the agent writes with write_file and runs with run_command: the policy cannot see into it. */
const TAMPER_STORE = `
const fs = require('fs');
const file = ['.ralph', 'tasks.json'].join('/');
const store = JSON.parse(fs.readFileSync(file, 'utf8'));
for (const t of store.tasks) {
  if (t.id === 'T-002') t.status = 'done';
  if (t.id === 'T-001') { t.promise = 'FORGED PROMISE: anything counts'; t.maxIterations = 99; }
}
store.tasks.push({ ...store.tasks[0], id: 'T-900', title: 'smuggled', status: 'todo', promise: 'x', maxIterations: 3 });
fs.writeFileSync(file, JSON.stringify(store, null, 2));
const config = ['.ralph', 'config.json'].join('/');
const c = JSON.parse(fs.readFileSync(config, 'utf8'));
c.gates = [];
c.loop = { ...c.loop, maxIterations: 99 };
fs.writeFileSync(config, JSON.stringify(c));
fs.mkdirSync(['.ralph', 'state'].join('/'), { recursive: true });
fs.writeFileSync(['.ralph', 'state', 'T-002.json'].join('/'), '{"forged":true}');
`;

const HOOK = `
const fs = require('fs');
const hook = ['.git', 'hooks', 'post-commit'].join('/');
fs.writeFileSync(hook, '#!/bin/sh\\ntouch hook-ran.marker\\n', { mode: 0o755 });
fs.appendFileSync(['.git', 'config'].join('/'), '\\n[core]\\n\\tfsmonitor = ./fsmonitor.sh\\n');
`;

describe('control files an agent changes through the shell are restored and reported as tampering', function () {
  this.timeout(60000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('forged store, promise, limits, config and checkpoints are put back; the other task stays todo; the next request carries the real promise', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'tamper.js', content: TAMPER_STORE } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'node tamper.js' } }] },
      { content: 'done for now' },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    // a rule the person set lets the agent's script run (the rules would ask before it, unsandboxed): the guard is the line tested here
    await h.configure({
      commands: { sandbox: 'off', allow: ['node tamper.js'] },
      gates: [{ name: 'check', kind: 'custom', command: 'node -e "process.exit(0)"' }],
    });
    const configBefore = await fs.readFile(h.paths.config, 'utf8');
    const first = await h.addTask();
    await h.addTask({ title: 'Other', promise: 'the other promise' });

    const summary = await h.runner().run({ taskId: first });

    const tasks = await h.store.list();
    assert.deepEqual(
      tasks.map((t) => [t.id, t.status]),
      [
        ['T-001', 'done'],
        ['T-002', 'todo'],
      ],
      'the other task is still todo and the smuggled one is gone',
    );
    assert.equal(tasks[0].promise, 'hello.txt contains hi');
    assert.equal(tasks[0].maxIterations, undefined);
    assert.equal(await fs.readFile(h.paths.config, 'utf8'), configBefore, 'the config (and its gates) are as the user wrote them');
    assert.equal(h.ws.exists('.ralph/state/T-002.json'), false, 'the forged checkpoint is removed');
    assert.equal(summary.results[0].iterations, 2);

    const warnings = eventsOf(h.events, 'warning').filter((w) => w.code === 'tampering');
    assert.equal(warnings.length, 1);
    for (const part of [
      '.ralph/tasks.json (modified)',
      '.ralph/config.json (modified)',
      '.ralph/state/T-002.json (created)',
      'changed while `node tamper.js` ran',
    ]) {
      assert.ok(warnings[0].message.includes(part), `${part} in ${warnings[0].message}`);
    }
    assert.equal(warnings[0].taskId, first);

    const requests = chatRequests(h.server);
    const toolResult = requestText(requests[2]);
    assert.match(toolResult, /\[ralph\] this changed control files, which have been restored/);
    const second = requestText(requests[3]);
    assert.match(second, /hello\.txt contains hi/);
    assert.doesNotMatch(second, /FORGED PROMISE/);
    assert.match(second, /Tampering: the orchestrator's control files were changed and have been restored/);

    const report = await fs.readFile(`${h.paths.reportsDir(first)}/iteration-1.md`, 'utf8');
    assert.match(report, /## Tampering \(restored\)\n[^#]*- \.ralph\/tasks\.json modified while `node tamper\.js` ran/);
    assert.match(
      await fs.readFile(`${h.paths.reportsDir(first)}/final.md`, 'utf8'),
      /## Tampering \(restored\)[\s\S]*iteration 1: \.ralph\/config\.json modified/,
    );
    const kept = (await fs.readdir(`${h.paths.reportsDir(first)}/tampered`, { recursive: true })).map(String);
    assert.ok(
      kept.some((f) => f.endsWith('dot-ralph/tasks.json')),
      `the forged copy is kept for inspection: ${kept.join(', ')}`,
    );

    const committed = h.ws.git('log', '--name-only', '--format=');
    assert.doesNotMatch(committed, /\.ralph\/(config|tasks)\.json/, 'neither the config nor the store is ever committed');
  });

  it("a post-commit hook and fsmonitor written through the shell are removed and never run on the orchestrator's commit", async () => {
    h = await makeLoopHarness([
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              command: "printf '#!/bin/sh\\ntouch hook-ran.marker\\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit",
            },
          },
        ],
      },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'hook.js', content: HOOK } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'node hook.js' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi' } }] },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    // the guard is the line tested here; where bubblewrap runs, the sandbox would stop the write first
    await h.configure({ commands: { sandbox: 'off', allow: ['node hook.js'] } });
    const configBefore = await fs.readFile(h.ws.path('.git/config'), 'utf8');
    const id = await h.addTask();
    await h.runner().run({ taskId: id });

    const results = eventsOf(h.events, 'tool.result').filter((r) => r.tool === 'run_command');
    assert.equal(results[0].ok, false, 'the direct write is refused by the command rules');
    assert.equal(h.ws.exists('.git/hooks/post-commit'), false, 'the hook written by a script is removed');
    assert.equal(await fs.readFile(h.ws.path('.git/config'), 'utf8'), configBefore);
    assert.ok(eventsOf(h.events, 'git.commit').length >= 1, 'the orchestrator committed');
    assert.equal(h.ws.exists('hook-ran.marker'), false, 'the hook never ran');
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'tampering');
    assert.match(warning?.message ?? '', /\.git\/hooks\/post-commit \(created\)/);
    assert.match(warning?.message ?? '', /\.git\/config \(modified\)/);
  });

  it("hooks already in the repository do not run on the orchestrator's commits", async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi' } }] },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    await fs.writeFile(h.ws.path('.git/hooks/post-commit'), '#!/bin/sh\ntouch hook-ran.marker\n', { mode: 0o755 });
    await fs.writeFile(h.ws.path('.git/hooks/reference-transaction'), '#!/bin/sh\ntouch ref-hook-ran.marker\n', { mode: 0o755 });
    const id = await h.addTask();
    await h.runner().run({ taskId: id });
    assert.equal(eventsOf(h.events, 'git.commit').length, 1);
    assert.equal(h.ws.exists('hook-ran.marker'), false);
    assert.equal(h.ws.exists('ref-hook-ran.marker'), false);
    assert.equal(
      eventsOf(h.events, 'warning').filter((w) => w.code === 'tampering').length,
      0,
      'nothing the orchestrator did counts as tampering',
    );
  });

  it('a gate that rewrites the task store is undone and reported', async () => {
    h = await makeLoopHarness([{ toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] }]);
    const gate = `node -e "const f=require('fs'),p=['.ralph','tasks.json'].join('/');const s=JSON.parse(f.readFileSync(p));s.tasks[1].status='done';f.writeFileSync(p,JSON.stringify(s))"`;
    await h.configure({ commands: { sandbox: 'off' }, gates: [{ name: 'sneaky', kind: 'custom', command: gate }] });
    const id = await h.addTask();
    await h.addTask({ title: 'Other' });
    await h.runner().run({ taskId: id });
    assert.deepEqual(
      (await h.store.list()).map((t) => t.status),
      ['done', 'todo'],
    );
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'tampering');
    assert.match(warning?.message ?? '', /\.ralph\/tasks\.json \(modified\): changed while the gate "sneaky" ran/);
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ApprovalRequest } from '../../../src/core/ports';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

/** The attack of issue 48: from its worktree, the agent raises its own limit and replaces its promise in the real task store. */
const FORGE_STORE = `node -e "const f=require('fs'),p='../../tasks.json',s=JSON.parse(f.readFileSync(p));s.tasks[0].maxIterations=5;s.tasks[0].promise='FORGED PROMISE';f.writeFileSync(p,JSON.stringify(s))"`;
const idle = { content: 'still working' };
const run = (command: string) => ({ toolCalls: [{ name: 'run_command', arguments: { command } }] });
const toolResults = (h: LoopHarness) => eventsOf(h.events, 'tool.result').filter((r) => r.tool === 'run_command');

describe('without a sandbox (commands.sandbox "off", or "auto" with no bwrap): what the rules and the guard hold (issue 48)', function () {
  this.timeout(60000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it("refuses, unattended, an agent's inline code that deletes a folder outside the workspace or writes ~/.bashrc; the task asks a person", async () => {
    h = await makeLoopHarness([]);
    const outside = await h.ws.outsideDir();
    await fs.writeFile(path.join(outside, 'keep.txt'), 'keep\n');
    const bashrc = path.join(outside, '.bashrc');
    h.server.push(
      run(`node -e "require('fs').rmSync('${outside}', {recursive: true})"`),
      run(`perl -e 'use File::Path; rmtree("${outside}")'`),
      run(`python3 -c "open('${bashrc}', 'a').write('pwned')"`),
      idle,
    );
    await h.configure({ commands: { sandbox: 'off' }, loop: { maxIterations: 1 } });
    const id = await h.addTask();
    await h.runner().run({ taskId: id });
    assert.equal(await fs.readFile(path.join(outside, 'keep.txt'), 'utf8'), 'keep\n', 'nothing outside the workspace changed');
    await assert.rejects(fs.stat(bashrc));
    const results = toolResults(h);
    assert.equal(results.length, 3);
    for (const r of results) assert.equal(r.ok, false);
    const task = await h.store.get(id);
    assert.equal(task.status, 'needs_help', 'the first unseen command is the task question');
    assert.match(task.questions?.at(-1)?.question ?? '', /code given inline, which the rules cannot read.*outside the workspace/);
  });

  it('with the default commands.sandbox "auto" and no bwrap on PATH: says once that commands run unconfined, and refuses the same attacks unattended', async function () {
    if (process.platform !== 'linux') this.skip(); // elsewhere "auto" finds seatbelt (macOS) or nothing (Windows) whatever PATH holds
    h = await makeLoopHarness([]);
    const outside = await h.ws.outsideDir();
    await fs.writeFile(path.join(outside, 'keep.txt'), 'keep\n');
    h.server.push(
      run('echo ok > ok.txt'),
      run(`node -e "require('fs').rmSync('${outside}', {recursive: true})"`),
      run(`perl -e 'use File::Path; rmtree("${outside}")'`),
      idle,
    );
    await h.configure({ loop: { maxIterations: 1 } });
    const id = await h.addTask();
    // this machine as one without the bubblewrap package: the programs the run needs, and no bwrap
    const bare = await h.ws.outsideDir();
    for (const program of ['git', 'node', 'perl', 'bash', 'sh']) {
      const found = execFileSync('sh', ['-c', `command -v ${program} || true`], { encoding: 'utf8' }).trim();
      if (found) await fs.symlink(found, path.join(bare, program));
    }
    const saved = process.env.PATH;
    process.env.PATH = bare;
    try {
      await h.runner().run({ taskId: id });
    } finally {
      process.env.PATH = saved;
    }
    assert.equal(await fs.readFile(path.join(outside, 'keep.txt'), 'utf8'), 'keep\n', 'nothing outside the workspace changed');
    assert.deepEqual(
      toolResults(h).map((r) => r.ok),
      [true, false, false],
    );
    // the first command that ran unconfined said so (a refused one runs nothing, confined or not)
    const noSandbox = eventsOf(h.events, 'warning').filter((w) => w.code === 'no-sandbox');
    assert.equal(noSandbox.length, 1, 'said once per run');
    assert.match(noSandbox[0].message, /bubblewrap \(bwrap\) not found/);
    assert.equal((await h.store.get(id)).status, 'needs_help');
  });

  it('asks a person first when one is there, and runs nothing the person refused', async () => {
    const asked: ApprovalRequest[] = [];
    h = await makeLoopHarness([]);
    const outside = await h.ws.outsideDir();
    h.server.push(run(`node -e "require('fs').writeFileSync('${outside}/x', '1')"`), idle);
    await h.configure({ commands: { sandbox: 'off' }, loop: { maxIterations: 1 } });
    const id = await h.addTask();
    await h.runner({ approval: { approve: async (request) => (asked.push(request), false) } }).run({ taskId: id });
    assert.equal(asked.length, 1);
    assert.match(asked[0].title, /node -e: code given inline/);
    assert.deepEqual(await fs.readdir(outside), []);
  });

  for (const attended of [false, true]) {
    it(`runs an honest agent's ordinary commands ${attended ? 'attended (nobody is asked)' : 'unattended'}: npm test, git, a loop writing generated files, a script the task did not change`, async () => {
      h = await makeLoopHarness([
        run('npm test'),
        run('git status --short && git log --oneline -1'),
        run('for k in a b; do mkdir -p gen/$k; for i in 1 2; do echo $i > gen/$k/f$i.txt; done; done'),
        run('node scripts/check.js'),
        { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi' } }] },
        { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote it', promiseEvidence: 'hello.txt contains hi' } }] },
      ]);
      await h.ws.write('package.json', '{"scripts":{"test":"node scripts/check.js"}}\n');
      await h.ws.write('scripts/check.js', 'console.log("checked")\n');
      h.ws.git('add', '-A');
      h.ws.git('commit', '-qm', 'project');
      await h.configure({ commands: { sandbox: 'off' } });
      const id = await h.addTask();
      const asked: ApprovalRequest[] = [];
      const approval = { approve: async (request: ApprovalRequest) => (asked.push(request), false) };
      await h.runner(attended ? { approval } : {}).run({ taskId: id });
      const results = toolResults(h);
      assert.deepEqual(
        results.map((r) => r.ok),
        [true, true, true, true],
        JSON.stringify(results.map((r) => r.summary)),
      );
      assert.deepEqual(asked, []);
      assert.equal(await h.ws.read('gen/b/f2.txt'), '2\n');
      assert.equal((await h.store.get(id)).status, 'done');
    });
  }

  it("undoes a forged limit and promise in the real task store from the task's worktree; the limit and promise stay the orchestrator's", async () => {
    h = await makeLoopHarness([run(FORGE_STORE), idle, idle, idle, idle, idle]);
    // a rule the person set lets the command run: the guard behind the rules is the line tested here
    await h.configure({ commands: { sandbox: 'off', allow: ['node -e *'] }, loop: { maxParallel: 2, maxIterations: 2 } });
    const id = await h.addTask({ maxIterations: 2 });
    const summary = await h.runner().run();
    const result = summary.results.find((r) => r.taskId === id);
    assert.equal(result?.status, 'timeout', JSON.stringify(summary.results));
    assert.equal(result?.iterations, 2, 'the forged limit of 5 never counted');
    const task = await h.store.get(id);
    assert.equal(task.maxIterations, 2);
    assert.equal(task.promise, 'hello.txt contains hi');
    const tampering = eventsOf(h.events, 'warning').filter((w) => w.code === 'tampering');
    assert.ok(
      tampering.some((w) => w.message.includes('.ralph/tasks.json (modified)')),
      JSON.stringify(tampering),
    );
    const requests = chatRequests(h.server);
    assert.ok(requests.length >= 2);
    for (const request of requests) {
      assert.match(requestText(request), /## Promise \(completion criteria\)\nhello\.txt contains hi\n/);
      assert.doesNotMatch(requestText(request), /## Promise \(completion criteria\)\nFORGED/);
    }
  });

  it('refuses the same forgery unattended without a rule that allows it: the store is never touched', async () => {
    h = await makeLoopHarness([run(FORGE_STORE), idle]);
    await h.configure({ commands: { sandbox: 'off' }, loop: { maxParallel: 2, maxIterations: 2 } });
    const id = await h.addTask({ maxIterations: 2 });
    await h.runner().run();
    assert.equal(toolResults(h)[0]?.ok, false);
    assert.equal(eventsOf(h.events, 'warning').filter((w) => w.code === 'tampering').length, 0);
    const task = await h.store.get(id);
    assert.equal(task.maxIterations, 2);
    assert.equal(task.promise, 'hello.txt contains hi');
  });
});

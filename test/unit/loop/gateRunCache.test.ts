import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import type { Step } from '../../fixtures/scriptedServer';
import { writeAgent, writeInstruction } from '../helpers/writeAgent';

/**
 * A node:test suite that writes down every run of it (where it ran, which *.num files it saw)
 * in a file outside the repository, with one test that fails everywhere (pre-existing at the
 * base) and one that checks the tasks' files. Slow enough (≈ 0.6 s) for tasks to start together.
 */
function suite(log: string): string {
  return `const fs = require('fs'); const path = require('path'); const test = require('node:test'); const assert = require('assert');
const files = fs.readdirSync('.').filter((f) => f.endsWith('.num')).sort();
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ where: path.basename(process.cwd()), files, foo: process.env.FOO ?? null }) + '\\n');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
test('legacy date parsing', () => assert.equal(new Date('2001-02-30').getDate(), 30));
test('num files hold digits', () => { for (const f of files) assert.match(fs.readFileSync(f, 'utf8'), /^\\d+$/); });
`;
}

const agent = writeAgent;

interface SuiteRun {
  where: string;
  files: string[];
  /** FOO in the suite's environment. */
  foo: string | null;
}

const GATE = 'node --test --test-reporter=tap suite.test.js';

/** Writes its task's file, runs `commands` one by one (run_command), then completes. */
function commandsAgent(commands: string[]): Step {
  return (request) => {
    const { file, content } = writeInstruction(request);
    const answered = (request.body?.messages ?? []).filter((m) => m.role === 'tool').length;
    if (answered === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: file, content } }] };
    if (answered <= commands.length) return { toolCalls: [{ name: 'run_command', arguments: { command: commands[answered - 1] } }] };
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: `${file} written` } }] };
  };
}

describe("the run's gate runs by tree (real git, scripted model, 4 agents in worktrees)", function () {
  this.timeout(240000);
  let h: LoopHarness;
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-gateruns-'));
  });
  afterEach(async () => {
    await h?.cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function project(
    tasks: { n: number; dependsOn?: string[] }[],
    step: Step = agent,
  ): Promise<{ ids: string[]; runs: () => Promise<SuiteRun[]> }> {
    const log = path.join(dir, 'runs.jsonl');
    h = await makeLoopHarness(Array.from({ length: 60 }, () => step));
    // no sandbox: the suite writes its log outside the repository
    await h.configure({
      loop: { maxParallel: 4, maxIterations: 4 },
      commands: { sandbox: 'off' },
      gates: [{ name: 'suite', command: GATE, kind: 'tests', required: true }],
    });
    await h.ws.write('suite.test.js', suite(log));
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a red legacy test');
    const ids: string[] = [];
    for (const t of tasks)
      ids.push(
        await h.addTask({
          title: `Write n${t.n}`,
          prompt: `WRITE n${t.n}.num <<${t.n}>>`,
          promise: `n${t.n}.num written`,
          ...(t.dependsOn ? { dependsOn: t.dependsOn } : {}),
        }),
      );
    // every run of the suite: the agents' (base, completion) and the merge queue's (in _merge worktrees)
    const runs = async () =>
      (await fs.readFile(log, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as SuiteRun);
    return { ids, runs };
  }

  /** Each tree the suite saw (its *.num files), with how many times it ran there. */
  function byTree(all: SuiteRun[]): Map<string, SuiteRun[]> {
    const trees = new Map<string, SuiteRun[]>();
    for (const r of all) trees.set(r.files.join(','), [...(trees.get(r.files.join(',')) ?? []), r]);
    return trees;
  }

  it('4 tasks on one base: the suite runs at the base once, every tree once in the whole run, and each task still has the red legacy test forgiven as pre-existing', async () => {
    const { ids, runs } = await project([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ids.map(() => 'done'),
      summary.results.map((r) => r.reason).join('; '),
    );
    const all = await runs();
    const atBase = all.filter((r) => r.files.length === 0);
    assert.equal(atBase.length, 1, `one run at the shared base, saw ${JSON.stringify(all)}`);
    assert.ok(
      ids.map((id) => `_base-${id}`).includes(atBase[0].where),
      `the base run happened in one task's scratch worktree at the base, beside its first iteration: ${atBase[0].where}`,
    );
    for (const [tree, seen] of byTree(all))
      assert.equal(seen.length, 1, `the tree [${tree}] ran ${seen.length} times: ${JSON.stringify(all)}`);
    // each task's baseline carries the base's verdict: the legacy failure is forgiven in every task's completion
    const baselines = eventsOf(h.events, 'integrity.baseline');
    assert.deepEqual(baselines.map((b) => b.taskId).sort(), [...ids].sort());
    for (const b of baselines) assert.equal(b.gates[0].tests?.named, 2);
    const finished = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId && ids.includes(e.taskId));
    for (const id of ids) {
      const own = finished.filter((e) => e.taskId === id && e.passed);
      assert.ok(own.length >= 1, `${id} passed its gate`);
      assert.deepEqual(own[0].preExisting, ['legacy date parsing'], `${id}: the legacy failure forgiven`);
    }
    // the first task onto the tip: its merged check is the tree its own gate passed on, taken from that run and said so
    const reused = finished.filter((e) => / \(taken from an earlier run on the same tree\)/.test(e.summary));
    assert.ok(reused.length >= 1, `a merged check took a task's own run: ${JSON.stringify(finished.map((e) => e.summary))}`);
    assert.ok(
      reused.every((e) => e.passed),
      'what was taken passed as it did the first time',
    );
  });

  it("a task that starts on a commit the queue landed takes the merged check's run as its base run", async () => {
    const first = await project([{ n: 1 }, { n: 2 }]);
    const dependent = await h.addTask({
      title: 'Write n3',
      prompt: 'WRITE n3.num <<3>>',
      promise: 'n3.num written',
      dependsOn: [first.ids[0]],
    });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done', 'done'],
      summary.results.map((r) => r.reason).join('; '),
    );
    const all = await first.runs();
    assert.equal(all.filter((r) => r.files.length === 0).length, 1, `the two first tasks shared their base's run: ${JSON.stringify(all)}`);
    assert.deepEqual(
      all.filter((r) => r.where.endsWith(dependent) && !r.files.includes('n3.num')),
      [],
      `no run at the dependent task's own base: ${JSON.stringify(all)}`,
    );
    for (const [tree, seen] of byTree(all))
      assert.equal(seen.length, 1, `the tree [${tree}] ran ${seen.length} times: ${JSON.stringify(all)}`);
    const baseline = eventsOf(h.events, 'integrity.baseline').find((b) => b.taskId === dependent);
    assert.equal(baseline?.gates[0].tests?.named, 2, "its baseline has the base's test inventory");
    const own = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId === dependent && e.passed);
    assert.deepEqual(own[0]?.preExisting, ['legacy date parsing']);
  });

  it("each agent runs the gate's command itself before COMPLETE: that run is the gate's (red legacy test and all), and every tree still runs once in the whole run", async () => {
    const { ids, runs } = await project([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }], commandsAgent([GATE]));
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ids.map(() => 'done'),
      summary.results.map((r) => r.reason).join('; '),
    );
    const all = await runs();
    for (const [tree, seen] of byTree(all))
      assert.equal(seen.length, 1, `the tree [${tree}] ran ${seen.length} times: ${JSON.stringify(all)}`);
    for (const [i, id] of ids.entries())
      assert.ok(
        all.some((r) => r.where === id && r.files.join() === `n${i + 1}.num`),
        `${id}'s own tree ran in its worktree, by its agent: ${JSON.stringify(all)}`,
      );
    const finished = eventsOf(h.events, 'gate.finished');
    for (const id of ids) {
      const own = finished.find((e) => e.taskId === id && e.iteration !== undefined);
      assert.ok(own?.passed, `${id} passed its gate`);
      assert.match(own.summary, / \(taken from an earlier run on the same tree\)/, `${id}: its gate took its agent's run`);
      assert.deepEqual(own.preExisting, ['legacy date parsing']);
    }
    const told = h.server.requests.flatMap((r) => (r.body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content)));
    assert.ok(
      told.some((t) => t.includes('[ralph] run as the gate "suite"')),
      "the agent was told its run is the gate's",
    );
    assert.ok(
      told.some((t) => /# fail 1/.test(t)),
      "the agent read the suite's own output",
    );
  });

  it("the agent cannot make a run of its own count for the gate: another environment (FOO=1, env, export) or another command line runs the gate again, in the gate's environment", async () => {
    const cheats = [`FOO=1 ${GATE}`, `env FOO=1 ${GATE}`, `export FOO=1; ${GATE}`, `${GATE}; echo "ok 99 - everything passes"`];
    const { ids, runs } = await project([{ n: 1 }], commandsAgent(cheats));
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
      summary.results.map((r) => r.reason).join('; '),
    );
    const onTree = (await runs()).filter((r) => r.files.join() === 'n1.num');
    assert.equal(onTree.filter((r) => r.foo === '1').length, 3, `the agent's three runs with FOO=1: ${JSON.stringify(onTree)}`);
    assert.equal(onTree.filter((r) => r.foo === null).length, 2, `its chained run, and the gate's own: ${JSON.stringify(onTree)}`);
    const own = eventsOf(h.events, 'gate.finished').find((e) => e.taskId === ids[0] && e.iteration !== undefined);
    assert.ok(own && !/taken from an earlier run/.test(own.summary), `the gate ran itself: ${own?.summary}`);
    const told = h.server.requests.flatMap((r) => (r.body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content)));
    assert.ok(!told.some((t) => t.includes('[ralph] run as the gate')), 'none of its runs was a gate run');
  });
});

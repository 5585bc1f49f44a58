import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { probeSandbox } from '../../../src/core/commands/sandbox';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { skipBecause, useToolchain } from '../gates/toolchain';
import { chatRequests, eventsOf, type LoopHarness, requestText } from '../helpers/loopHarness';
import { projectHarness } from '../helpers/verdictProjects';

/**
 * A workspace under /tmp (a clone there, a CI checkout), run in parallel (the default three
 * agents, each in its own worktree) with its dependencies installed and linked: the sandbox's
 * private /tmp must still show each worktree its linked node_modules (mocha here, from the
 * shared tool cache, itself under /tmp) and the gate logs its feedback points to.
 */
const MOCHA_PROJECT = {
  // mocha by its path in the linked node_modules: the test runner's own PATH (which may hold a mocha) cannot stand in for the link
  'package.json': `${JSON.stringify({ name: 'units', private: true, scripts: { test: 'node node_modules/mocha/bin/mocha.js' } }, null, 2)}\n`,
  'test/base.test.js': "const assert = require('node:assert');\nit('adds', () => assert.equal(1 + 1, 2));\n",
};

/**
 * Every task's agent: `UNIT <name>` in its prompt. First iteration: writes lib/<name>.js with a bug
 * (for `slow` only) and its test, and completes; told the gate failed, it reads the gate log the
 * feedback names with run_command, then fixes the bug and completes again.
 */
function agent(): Step {
  return (request: RecordedRequest) => {
    const text = requestText(request);
    const name = /UNIT (\w+)/.exec(text)![1];
    const messages = request.body?.messages ?? [];
    const tools = messages.filter((m) => m.role === 'tool').length;
    const failedBefore = /Your COMPLETE was not accepted/.test(text);
    const value = name === 'slow' && !failedBefore ? 0 : 1;
    const log = /full output of tests: (\S+) — outside your working folder/.exec(text)?.[1];
    const plan: Step[] = [
      ...(failedBefore && log ? [{ toolCalls: [{ name: 'run_command', arguments: { command: `tail -n 40 '${log}'` } }] }] : []),
      { toolCalls: [{ name: 'write_file', arguments: { path: `lib/${name}.js`, content: `exports.value = ${value};\n` } }] },
      {
        toolCalls: [
          {
            name: 'write_file',
            arguments: {
              path: `test/${name}.test.js`,
              content: `const assert = require('node:assert');\nit('${name} is one', () => assert.equal(require('../lib/${name}').value, 1));\n`,
            },
          },
        ],
      },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `unit ${name}`, promiseEvidence: 'npm test passes' } }] },
    ];
    return plan[Math.min(tools, plan.length - 1)] as never;
  };
}

describe('a workspace under /tmp in a parallel run: linked dependencies and gate logs inside the sandbox', function () {
  this.timeout(240000);
  const toolchain = useToolchain();
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('three agents in worktrees with linked node_modules (mocha) all end done; the one told to read its gate log can', async function () {
    if (!(await probeSandbox()).available) return skipBecause(this, 'bubblewrap does not work here: no private /tmp to test');
    h = await projectHarness(Array.from({ length: 30 }, agent), {
      files: MOCHA_PROJECT,
      links: { node_modules: toolchain().nodeModules },
      config: {
        loop: { maxParallel: 3, maxIterations: 3 },
        gates: [{ name: 'tests', command: 'npm test', kind: 'tests', required: true }],
      },
    });
    assert.ok(h.ws.dir.startsWith(`${path.resolve(os.tmpdir())}/`) && os.tmpdir() === '/tmp', `the workspace is under /tmp: ${h.ws.dir}`);
    for (const name of ['fast', 'slow', 'third'])
      await h.addTask({ title: `unit ${name}`, prompt: `UNIT ${name}`, promise: 'npm test passes' });
    const summary = await h.runner().run();
    assert.deepEqual(summary.results.map((r) => r.status).sort(), ['done', 'done', 'done'], JSON.stringify(summary.results));
    const worktreeGates = eventsOf(h.events, 'gate.finished').filter((g) => g.iteration !== undefined);
    assert.ok(
      worktreeGates.every((g) => g.passed || /1 failing/.test(g.summary)),
      worktreeGates.map((g) => g.summary).join(' | '),
    );
    const read = eventsOf(h.events, 'tool.result').find((r) => r.tool === 'run_command');
    assert.ok(read, 'the slow agent read its gate log');
    assert.equal(read.ok, true, read.summary);
    // what the command printed went back to the model: the log's lines, not "No such file or directory"
    const toolOutputs = chatRequests(h.server).flatMap((r) =>
      (r.body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content)),
    );
    assert.ok(
      toolOutputs.some((o) => /tail -n 40|exit code 0/.test(o) && /1 failing/.test(o) && /slow is one/.test(o)),
      toolOutputs.filter((o) => /tail/.test(o)).join('\n---\n'),
    );
    assert.ok(!eventsOf(h.events, 'gate.finished').some((g) => /mocha: not found/.test(g.summary)));
  });

  it('a gate naming a path under /tmp that the sandbox hides fails saying so, naming the sandbox and the path', async function () {
    if (!(await probeSandbox()).available) return skipBecause(this, 'bubblewrap does not work here');
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-outside-gate-'));
    try {
      await fs.writeFile(path.join(outside, 'check.js'), 'process.exit(0);\n');
      h = await projectHarness([{ toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'x', promiseEvidence: 'y' } }] }], {
        files: { 'README.md': '# x\n' },
        config: {
          loop: { maxIterations: 1 },
          gates: [{ name: 'outside', command: `node ${outside}/check.js`, kind: 'custom', required: true }],
        },
      });
      await h.addTask();
      assert.equal((await h.runner().run()).results[0].status, 'timeout');
      const [finished] = eventsOf(h.events, 'gate.finished').filter((g) => g.iteration === 1);
      assert.equal(finished.passed, false);
      const log = await h.ws.read(`.ralph/reports/T-001/gates/iteration-1-outside.log`);
      assert.match(
        log,
        new RegExp(
          `names ${outside}/check\\.js, which the sandbox \\(bubblewrap, commands\\.sandbox\\) hides: commands get a private, empty /tmp`,
        ),
      );
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });
});

import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseConfig } from '../../../src/core/config/load';
import { createModelClient } from '../../../src/core/llm/factory';
import { RalphRunner } from '../../../src/core/loop/run/runner';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { probeSandbox, type SandboxProbe, SandboxUnavailableError } from '../../../src/core/commands/sandbox';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, readJson, TEST_KEY, TEST_KEY_ENV } from '../helpers/loopHarness';

/** A runner wired like the harness's, with the sandbox probe given. */
async function runnerWith(h: LoopHarness, sandboxProbe: () => Promise<SandboxProbe>): Promise<RalphRunner> {
  const config = parseConfig(await readJson(h.paths.config));
  return new RalphRunner({
    workspace: h.ws.dir,
    config,
    bus: h.bus,
    commands: new NodeCommandRunner(),
    model: createModelClient(config.llm, TEST_KEY, () => {}),
    sandboxProbe,
  });
}
const noBwrap = async (): Promise<SandboxProbe> => ({ available: false, reason: 'bubblewrap (bwrap) not found (test)' });

const call = (name: string, args: Record<string, unknown>): Step => ({ toolCalls: [{ name, arguments: args }] });
const complete: Step = call('ralph_complete', { summary: 'done', promiseEvidence: 'hello.txt contains hi' });

describe('no secret in reach (the loop against the scripted server)', function () {
  if (process.platform === 'win32') return;
  let h: LoopHarness;
  afterEach(async () => {
    delete process.env.RALPH_LOOP_TEST_TOKEN;
    await h?.cleanup();
  });

  it('printenv of the API key shows nothing; a file holding it is redacted; the key never reaches the server, the events or the run log', async () => {
    process.env.RALPH_LOOP_TEST_TOKEN = 'tok-loop-secret-987654321';
    h = await makeLoopHarness([
      call('run_command', { command: `printenv ${TEST_KEY_ENV}; printenv RALPH_LOOP_TEST_TOKEN; echo "printed"` }),
      call('read_file', { path: 'leak.txt' }),
      call('write_file', { path: 'hello.txt', content: 'hi' }),
      complete,
    ]);
    await h.configure({ gates: [{ name: 'env', command: `echo "gate sees [$${TEST_KEY_ENV}]"; cat leak.txt`, kind: 'custom' }] });
    await fs.writeFile(h.ws.path('leak.txt'), `the key is ${TEST_KEY} and the token tok-loop-secret-987654321\n`);
    const id = await h.addTask();
    const summary = await h.runner().run();

    assert.equal((await h.store.get(id)).status, 'done');
    const requests = chatRequests(h.server);
    assert.ok(requests.length >= 4);
    for (const request of requests) {
      const body = JSON.stringify(request.body);
      assert.ok(!body.includes(TEST_KEY), `request ${request.seq} carries the API key`);
      assert.ok(!body.includes('tok-loop-secret-987654321'), `request ${request.seq} carries the token`);
    }
    const printed = JSON.stringify(requests[1].body);
    assert.match(printed, /printed/);
    assert.match(JSON.stringify(requests[2].body), /\[REDACTED\]/);
    const gate = eventsOf(h.events, 'gate.finished')[0];
    assert.ok(gate, 'the gate ran');
    const all = JSON.stringify(h.events) + (await fs.readFile(summary.logFile, 'utf8'));
    assert.ok(!all.includes(TEST_KEY), 'the key is in an event or the run log');
    assert.ok(!all.includes('tok-loop-secret-987654321'), 'the token is in an event or the run log');
    // The file holding the key stays on disk, out of the history; the rest is committed.
    assert.equal(h.ws.git('ls-files', 'leak.txt'), '');
    assert.equal(h.ws.git('ls-files', 'hello.txt'), 'hello.txt');
    assert.ok(!h.ws.git('log', '-p', '--all').includes(TEST_KEY));
    assert.ok(h.ws.exists('leak.txt'));
    assert.ok(eventsOf(h.events, 'warning').some((w) => w.code === 'secret-withheld' && w.message.includes('leak.txt')));
  });

  it('commands.sandbox "required" without bubblewrap refuses the run before any model call', async () => {
    h = await makeLoopHarness([call('write_file', { path: 'hello.txt', content: 'hi' }), complete]);
    await h.configure({ commands: { sandbox: 'required' } });
    const id = await h.addTask();
    await assert.rejects(
      (await runnerWith(h, noBwrap)).run(),
      (error: unknown) => error instanceof SandboxUnavailableError && /required/.test(error.message),
    );
    assert.equal(chatRequests(h.server).length, 0);
    assert.notEqual((await h.store.get(id)).status, 'done');
  });

  it('commands.sandbox "auto" without bubblewrap runs and warns once per run', async () => {
    h = await makeLoopHarness([
      call('run_command', { command: 'echo one' }),
      call('run_command', { command: 'echo two' }),
      call('write_file', { path: 'hello.txt', content: 'hi' }),
      complete,
    ]);
    const id = await h.addTask();
    await (await runnerWith(h, noBwrap)).run();
    assert.equal((await h.store.get(id)).status, 'done');
    const warnings = eventsOf(h.events, 'warning').filter((w) => w.code === 'no-sandbox');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0].message, /without a sandbox/);
  });

  it('in the sandbox the agent cannot plant a git hook or write outside the workspace, a gate cannot write .git; its notes stay writable', async function () {
    const probe = await probeSandbox();
    if (!probe.available) {
      console.log(`      skipped: no working bubblewrap here (${probe.reason})`);
      this.skip();
    }
    const outside = `/tmp/ralph-loop-escape-${process.pid}-${Date.now()}`;
    h = await makeLoopHarness([
      // Inside a script the command rules cannot read (they ask about what they cannot judge):
      // the sandbox is the barrier here.
      call('run_command', {
        command: `node -e "const fs=require('fs'); for (const [f, t] of [['.g'+'it/hooks/post-commit', 'touch HOOK_RAN'], [process.argv[1], 'x']]) { try { fs.writeFileSync(f, t, { mode: 0o755 }); } catch (e) { console.log(e.message); } }" ${outside}; echo "n" > .ralph/progress/T-001.md`,
      }),
      call('write_file', { path: 'hello.txt', content: 'hi' }),
      complete,
    ]);
    await h.configure({
      commands: { sandbox: 'required' },
      gates: [{ name: 'g', command: 'touch .git/gate-was-here; test ! -e .git/gate-was-here', kind: 'custom' }],
    });
    const id = await h.addTask();
    await h.runner().run();
    assert.equal(id, 'T-001');
    assert.equal((await h.store.get(id)).status, 'done');
    assert.equal(h.ws.exists('.git/hooks/post-commit'), false);
    assert.equal(h.ws.exists('HOOK_RAN'), false);
    assert.equal(h.ws.exists('.git/gate-was-here'), false);
    assert.equal((await fs.stat(outside).catch(() => undefined)) === undefined, true, 'the write reached the host /tmp');
    assert.equal(await h.ws.read('.ralph/progress/T-001.md'), 'n\n');
    assert.match(JSON.stringify(chatRequests(h.server)[1].body), /read-only file system/i);
  });
});

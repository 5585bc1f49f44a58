import assert from 'node:assert/strict';
import { createDelegationTools } from '../../../../src/core/agent/delegation/delegateTools';
import { ToolRegistry } from '../../../../src/core/agent/toolRegistry';
import type { StaticStep, Step } from '../../../fixtures/scriptedServer';
import { chatRequests, type LoopHarness, makeLoopHarness } from '../../helpers/loopHarness';
import { type DelegationEnv, makeDelegationEnv } from './delegationEnv';

const write = (path: string, content: string): StaticStep => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });
const run = (command: string): StaticStep => ({ toolCalls: [{ name: 'run_command', arguments: { command } }] });
const commit = (message: string): StaticStep => ({ toolCalls: [{ name: 'git_commit', arguments: { message } }] });
const PASSING = `node -e "console.log('1 passing')"`;

function callTool(env: DelegationEnv, name: string, args: unknown) {
  return new ToolRegistry(createDelegationTools(env.delegator)).execute({ id: 'call-1', name, arguments: JSON.stringify(args) }, env.ctx);
}

describe("a sub-agent's evidence is its own", function () {
  this.timeout(30000);
  let env: DelegationEnv;
  afterEach(async () => env?.cleanup());

  describe('parallel writers are refused', () => {
    for (const [name, files] of [
      ['different files', ['a.txt', 'b.txt']],
      ['the same file', ['same.txt', 'same.txt']],
    ] as const) {
      it(`two parallel devos editing ${name}: refused before any model call, nothing written`, async () => {
        env = await makeDelegationEnv([write(files[0], 'one\n'), { content: 'done' }, write(files[1], 'two\n'), { content: 'done' }]);
        const head = env.ws.git('rev-parse', 'HEAD');
        const result = await callTool(env, 'delegate_parallel', {
          delegations: files.map((file) => ({ target: 'devo', objective: `write ${file}` })),
        });
        assert.equal(result.ok, false);
        assert.match(
          result.content,
          /refused, nothing ran: delegations\.0 \(devo\), delegations\.1 \(devo\) can all change the working tree/,
        );
        assert.match(result.content, /Scouts may run in parallel; writers one at a time: call delegate for each writer in turn/);
        assert.equal(env.server.requests.length, 0, 'no sub-agent started');
        for (const file of files) assert.equal(env.ws.exists(file), false);
        assert.equal(env.ws.git('rev-parse', 'HEAD'), head);
      });
    }

    it('one devo beside a scout runs; the devo commits only its own change', async () => {
      // the order of requests between the two agents is not fixed: each step serves whoever asks
      const devoSteps: StaticStep[] = [write('mine.txt', 'devo\n'), run(PASSING), commit('devo: add mine.txt'), { content: 'done' }];
      let next = 0;
      const shared: Step = (request) => {
        if (/You are DEVO/.test(String(request.body?.messages?.[0].content))) return devoSteps[next++];
        if (!request.body?.messages?.some((m) => m.role === 'tool'))
          return { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] };
        return { content: '```json\n{"summary":"read it","confidence":"high"}\n```' };
      };
      env = await makeDelegationEnv(Array.from({ length: 6 }, () => shared));
      const result = await callTool(env, 'delegate_parallel', {
        delegations: [
          { target: 'scout', objective: 'look' },
          { target: 'devo', objective: 'add mine.txt' },
        ],
      });
      assert.equal(result.ok, true, result.content);
      assert.equal(result.summary, 'scout SUCCESS, devo SUCCESS');
      assert.equal(env.ws.git('show', '--name-only', '--format=', 'HEAD'), 'mine.txt');
    });
  });

  describe('default expected evidence', () => {
    it('a devo that edits and stops comes back PARTIAL with [MISSING] lines the orchestrator never asked for', async () => {
      env = await makeDelegationEnv([write('fix.txt', 'fixed\n'), { content: 'Fixed the bug.' }]);
      const result = await callTool(env, 'delegate', { target: 'devo', objective: 'Fix the login bug' });
      assert.equal(
        result.content,
        [
          '[DELEGATION RESULT — DEVO]',
          'Objective: Fix the login bug',
          '',
          'Status: PARTIAL',
          'Evidence:',
          '  - [OK] write_file: wrote fix.txt (1 line, 6 bytes)',
          '  - [MISSING] run_command: no command run after the last edit: the change was never exercised',
          '  - [MISSING] git_commit: no commit created',
          '',
          'Agent Response:',
          'Fixed the bug.',
        ].join('\n'),
      );
    });

    it('a command run before the last edit does not count; a delegation that says not to commit expects no commit', async () => {
      env = await makeDelegationEnv([run(PASSING), write('fix.txt', 'fixed\n'), { content: 'ok' }]);
      const result = await callTool(env, 'delegate', { target: 'devo', objective: 'Fix it', constraints: ['do not commit'] });
      assert.match(result.content, /Status: PARTIAL/);
      assert.match(result.content, /\[MISSING\] run_command: no command run after the last edit/);
      assert.doesNotMatch(result.content, /MISSING\] git_commit/);
    });

    it('a devo that edits, runs the tests after its edit and commits is SUCCESS; a failing run is [ERROR], not [MISSING]', async () => {
      env = await makeDelegationEnv([write('fix.txt', 'fixed\n'), run(PASSING), commit('fix'), { content: 'ok' }]);
      const result = await callTool(env, 'delegate', { target: 'devo', objective: 'Fix it' });
      assert.match(result.content, /Status: SUCCESS/);
      assert.doesNotMatch(result.content, /MISSING/);
      await env.cleanup();

      env = await makeDelegationEnv([write('fix.txt', 'fixed\n'), run('node -e "process.exit(1)"'), commit('fix'), { content: 'ok' }]);
      const failing = await callTool(env, 'delegate', { target: 'devo', objective: 'Fix it' });
      assert.match(failing.content, /Status: PARTIAL/);
      assert.match(failing.content, /\[ERROR\] run_command/);
      assert.doesNotMatch(failing.content, /MISSING/);
    });

    it('a devo that only reads and answers expects nothing more; a scout that looked at nothing is PARTIAL', async () => {
      env = await makeDelegationEnv([
        { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
        { content: 'It is a sample.' },
        { content: '```json\n{"summary":"guess","confidence":"high"}\n```' },
      ]);
      const devo = await callTool(env, 'delegate', { target: 'devo', objective: 'Summarise the README' });
      assert.match(devo.content, /Status: SUCCESS/);
      const scout = await callTool(env, 'delegate', { target: 'scout', objective: 'Find the login code' });
      assert.match(scout.content, /Status: PARTIAL/);
      assert.match(scout.content, /\[MISSING\] read_file: nothing read, listed or searched/);
    });
  });

  describe('in the loop', () => {
    let h: LoopHarness;
    afterEach(async () => h?.cleanup());

    it("the orchestrator's next request carries the seed's [MISSING] git_commit line without having asked for it", async () => {
      h = await makeLoopHarness([
        { toolCalls: [{ name: 'delegate', arguments: { target: 'devo', objective: 'Fix the validation regex' } }] },
        write('login.js', 'module.exports = /.+@.+/;\n'),
        { content: 'Done: the regex accepts + now.' },
        { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
      ]);
      await h.addTask();
      await h.runner().run();
      const requests = chatRequests(h.server);
      const messages = requests[3].body?.messages ?? [];
      const envelope = String(messages[messages.length - 1].content);
      assert.match(envelope, /Status: PARTIAL/);
      assert.match(envelope, /^ {2}- \[MISSING\] git_commit: no commit created$/m);
      assert.match(envelope, /^ {2}- \[MISSING\] run_command: no command run after the last edit/m);
    });
  });
});

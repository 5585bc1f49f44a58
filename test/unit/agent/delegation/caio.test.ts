import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createDelegationTools } from '../../../../src/core/agent/delegation/delegateTools';
import { Delegator } from '../../../../src/core/agent/delegation/delegator';
import { createModelClient } from '../../../../src/core/llm/factory';
import { ToolRegistry } from '../../../../src/core/agent/toolRegistry';
import type { Step } from '../../../fixtures/scriptedServer';
import { TEST_GIT_ENV } from '../../helpers/tempWorkspace';
import { type DelegationEnv, makeDelegationEnv, ofType } from './delegationEnv';

/** A notify command that, if it ever runs, leaves a marker file and prints a URL. */
const NOTIFY = 'touch caio-ran.marker && echo "sent: https://chat.example.invalid/msg/42"';
const notifyStep: Step = { toolCalls: [{ name: 'notify', arguments: { message: 'Release 1.2 is out' } }] };
const report: Step = { content: 'Reported the notification.' };

function delegateToCaio(env: DelegationEnv, objective = 'Tell the team') {
  return new ToolRegistry(createDelegationTools(env.delegator)).execute(
    { id: 'c1', name: 'delegate', arguments: JSON.stringify({ target: 'caio', objective }) },
    env.ctx,
  );
}

describe('caio: actions outside the working tree need approval', function () {
  let env: DelegationEnv;
  afterEach(async () => env?.cleanup());

  it('without an approval port (the default: refuse) the command never runs; the evidence is [PENDING]', async () => {
    env = await makeDelegationEnv([notifyStep, report], { config: { agents: { caio: { commands: { notify: NOTIFY } } } } });
    const result = await delegateToCaio(env);
    assert.equal(env.ws.exists('caio-ran.marker'), false, 'the command did not run');
    assert.match(result.content, /^Status: PARTIAL$/m);
    assert.match(result.content, /^ {2}- \[PENDING\] notify: awaiting approval: send the notification "Release 1\.2 is out"$/m);
    const evidence = ofType(env.events, 'delegation.result')[0].result.toolEvidence[0];
    assert.deepEqual(evidence, {
      tool: 'notify',
      success: false,
      pendingApproval: true,
      summary: 'awaiting approval: send the notification "Release 1.2 is out"',
      nextStep: 'a human must approve: send the notification "Release 1.2 is out"',
    });
    const toolMessage = env.server.requests[1].body?.messages?.at(-1);
    assert.match(String(toolMessage?.content), /Not run: .* needs a human's approval/);
  });

  it('a human who says no: asked once with the exact command, and the command never runs', async () => {
    env = await makeDelegationEnv([notifyStep, report], { approve: false, config: { agents: { caio: { commands: { notify: NOTIFY } } } } });
    const result = await delegateToCaio(env);
    assert.equal(env.ws.exists('caio-ran.marker'), false);
    assert.equal(env.approvals.length, 1);
    assert.equal(env.approvals[0].title, 'Ralph (caio) wants to send the notification "Release 1.2 is out"');
    assert.match(
      env.approvals[0].detail,
      new RegExp(`^Command: ${NOTIFY.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nRALPH_MESSAGE=Release 1\\.2 is out\nDirectory: `),
    );
    assert.match(result.content, /\[PENDING\] notify/);
  });

  it('once approved, the command runs and the evidence carries the externalId', async () => {
    env = await makeDelegationEnv([notifyStep, report], { approve: true, config: { agents: { caio: { commands: { notify: NOTIFY } } } } });
    const result = await delegateToCaio(env);
    assert.equal(env.ws.exists('caio-ran.marker'), true);
    assert.match(result.content, /^Status: SUCCESS$/m);
    assert.match(
      result.content,
      /^ {2}- \[OK\] notify id=https:\/\/chat\.example\.invalid\/msg\/42: send the notification "Release 1\.2 is out": done$/m,
    );
  });

  it('git_push (default command) pushes to the remote after approval; the id is the pushed sha', async () => {
    env = await makeDelegationEnv([{ toolCalls: [{ name: 'git_push', arguments: { ref: 'main' } }] }, report], { approve: true });
    const remote = await env.ws.outsideDir();
    execFileSync('git', ['init', '-q', '--bare', remote], { env: TEST_GIT_ENV });
    env.ws.git('remote', 'add', 'origin', remote);
    const result = await delegateToCaio(env, 'Push main');
    const sha = env.ws.git('rev-parse', 'HEAD');
    assert.equal(execFileSync('git', ['rev-parse', 'main'], { cwd: remote, env: TEST_GIT_ENV, encoding: 'utf8' }).trim(), sha);
    assert.match(result.content, new RegExp(`\\[OK\\] git_push id=${sha.slice(0, 12)}: push main to origin: done`));
    assert.match(env.approvals[0].detail, /RALPH_REMOTE=origin\nRALPH_REF=main/);
  });

  it('an action with no configured command is an [ERROR] naming the config key, without asking anyone', async () => {
    env = await makeDelegationEnv([{ toolCalls: [{ name: 'open_pull_request', arguments: { title: 'Fix login' } }] }, report], {
      approve: true,
    });
    const result = await delegateToCaio(env, 'Open a PR');
    assert.equal(env.approvals.length, 0);
    assert.match(result.content, /^Status: FAILED$/m);
    assert.match(result.content, /\[ERROR\] open_pull_request: no command configured \(agents\.caio\.commands\.pullRequest\)/);
  });

  it('parallel caio delegations ask one question at a time', async () => {
    env = await makeDelegationEnv([notifyStep, notifyStep, report, report], {
      config: { agents: { caio: { commands: { notify: 'true' } } } },
    });
    let open = 0;
    let peak = 0;
    // a slow human: each answer takes a while
    const slow = {
      approve: async () => {
        open++;
        peak = Math.max(peak, open);
        await new Promise((resolve) => setTimeout(resolve, 50));
        open--;
        return true;
      },
    };
    const serialized = new Delegator({ config: env.config, model: createModelClient(env.config.llm, 'k'), approval: slow });
    const result = await new ToolRegistry(createDelegationTools(serialized)).execute(
      {
        id: 'c1',
        name: 'delegate_parallel',
        arguments: JSON.stringify({
          delegations: [
            { target: 'caio', objective: 'a' },
            { target: 'caio', objective: 'b' },
          ],
        }),
      },
      env.ctx,
    );
    assert.equal(peak, 1);
    assert.equal((result.content.match(/\[OK\] notify/g) ?? []).length, 2);
  });
});

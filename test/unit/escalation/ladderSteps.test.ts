import assert from 'node:assert/strict';
import { checkAgentsFound } from '../../../src/core/agentCli/port';
import { parseConfig } from '../../../src/core/config/load';
import { ConfigError } from '../../../src/core/errors';
import { agentOnStep, agentsOnLadder, ladderOfConfig, ladderSteps } from '../../../src/core/escalation/steps';
import { agentFor, agentLabel } from '../../../src/core/loop/task/agentCliConversation';
import { escalationSettings } from '../../../src/core/loop/task/escalationStep';
import { AgentCliRunner } from '../../../src/core/agentCli/port';

const MODELS = ['cheap', 'mid', 'top'];
const ralph = { command: 'ralph', args: [] };

function configError(value: unknown): string {
  try {
    parseConfig(value);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('the config was accepted');
}

describe('the escalation ladder of agents and models (escalation.ladder)', () => {
  it("keeps today's config: no ladder is the models of llm.models, on the task's agent", () => {
    const config = parseConfig({ llm: { models: MODELS } });
    assert.equal(config.escalation.ladder, undefined);
    assert.deepEqual(ladderSteps(config.escalation.ladder, config.llm.models), [{ model: 'cheap' }, { model: 'mid' }, { model: 'top' }]);
    const builtin = { config: config.agent };
    assert.deepEqual(agentOnStep(ladderSteps(undefined, MODELS), 1, builtin, MODELS), { kind: 'builtin', model: 'mid' });
    // a config on Codex with today's ladder: every step stays on Codex with agent.model
    const codex = { config: { kind: 'codex' as const, model: 'gpt-5' } };
    for (const tier of [0, 1, 2])
      assert.deepEqual(agentOnStep(ladderSteps(undefined, MODELS), tier, codex, MODELS), { kind: 'codex', model: 'gpt-5' });
  });

  it('parses steps of both forms, and names what is wrong with a bad one', () => {
    const config = parseConfig({
      escalation: { ladder: ['cheap', { agent: 'claude-code', model: 'opus' }, { agent: 'codex' }, { agent: 'builtin', model: 'o3' }] },
    });
    assert.deepEqual(config.escalation.ladder, [
      'cheap',
      { agent: 'claude-code', model: 'opus' },
      { agent: 'codex' },
      { agent: 'builtin', model: 'o3' },
    ]);
    assert.match(configError({ escalation: { ladder: [] } }), /escalation\.ladder.*at least one step/);
    assert.match(
      configError({ escalation: { ladder: ['cheap', 42] } }),
      /escalation\.ladder\.1.*a model of the built-in agent .* or an agent with its model/,
    );
    assert.match(configError({ escalation: { ladder: [{ agent: 'cursor', model: 'x' }] } }), /escalation\.ladder\.0/);
    assert.match(
      configError({ escalation: { ladder: [{ agent: 'claude-code', model: 'opus', effort: 'max' }] } }),
      /escalation\.ladder\.0/,
    );
    assert.match(configError({ escalation: { ladder: [{ agent: 'builtin' }] } }), /built-in agent names its model/);
    assert.match(configError({ escalation: { ladder: [''] } }), /cannot be empty/);
    assert.match(
      configError({
        llm: { provider: 'vscode', models: ['copilot:gpt-4.1'] },
        escalation: { ladder: ['not a selector', { agent: 'codex', model: 'gpt-5' }] },
      }),
      /escalation\.ladder\.0.*does not name an editor model/,
    );
  });

  it('the step decides the agent and its model, above agent.kind and below the task and the run', () => {
    const steps = ladderSteps(['cheap', 'mid', { agent: 'claude-code', model: 'opus' }, { agent: 'codex' }], MODELS);
    const config = { kind: 'builtin' as const };
    assert.deepEqual(agentOnStep(steps, 0, { config }, MODELS), { kind: 'builtin', model: 'cheap' });
    assert.deepEqual(agentOnStep(steps, 2, { config }, MODELS), { kind: 'claude-code', model: 'opus' });
    assert.deepEqual(agentOnStep(steps, 3, { config }, MODELS), { kind: 'codex' }, "no model: the CLI's own");
    assert.deepEqual(agentOnStep(steps, 9, { config }, MODELS), { kind: 'codex' }, 'clamped to the top');
    // agent.model is agent.kind's: a step that names that agent without a model takes it
    assert.deepEqual(agentOnStep(steps, 3, { config: { kind: 'codex', model: 'gpt-5' } }, MODELS), { kind: 'codex', model: 'gpt-5' });
    // the task's own agent and the run's --agent win over the step; the step's model goes with its agent only
    assert.deepEqual(agentOnStep(steps, 2, { task: 'claude-code', config }, MODELS), { kind: 'claude-code', model: 'opus' });
    assert.deepEqual(agentOnStep(steps, 2, { task: 'opencode', config: { kind: 'builtin', model: 'x/y' } }, MODELS), {
      kind: 'opencode',
      model: 'x/y',
    });
    assert.deepEqual(agentOnStep(steps, 2, { override: 'builtin', task: 'codex', config }, MODELS), { kind: 'builtin', model: 'mid' });
    assert.deepEqual(
      agentOnStep(ladderSteps([{ agent: 'codex' }], MODELS), 0, { override: 'builtin', config }, MODELS),
      { kind: 'builtin', model: 'cheap' },
      'no built-in step: the first of llm.models',
    );
    assert.deepEqual(agentsOnLadder(steps, { config }, MODELS), ['builtin', 'claude-code', 'codex']);
    assert.deepEqual(agentsOnLadder(steps, { override: 'opencode', config }, MODELS), ['opencode']);
  });

  it('names each step as its iterations are named, and the task loop runs the step it is on', () => {
    const config = parseConfig({
      llm: { models: MODELS },
      escalation: { ladder: ['cheap', { agent: 'claude-code', model: 'opus' }, { agent: 'codex' }] },
    });
    const services = { config, agentCli: new AgentCliRunner(config.agent, { ralph }) };
    assert.deepEqual(escalationSettings(services, {}).ladder, ['cheap', 'Claude Code: opus', 'Codex: its default model']);
    assert.deepEqual(escalationSettings(services, { agent: 'opencode' }).ladder, [
      'OpenCode: its default model',
      'OpenCode: its default model',
      'OpenCode: its default model',
    ]);
    assert.equal(agentLabel(agentFor(services, {}, 1)), 'Claude Code: opus');
    const pinned = { config, agentCli: new AgentCliRunner(config.agent, { ralph, override: 'builtin' }) };
    assert.deepEqual(agentFor(pinned, {}, 2), { kind: 'builtin', model: 'cheap' });
    // a run without agent CLIs (no runner) runs the built-in agent
    assert.deepEqual(agentFor({ config }, {}, 1), { kind: 'builtin', model: 'cheap' });
  });

  it("checks before a run that the CLIs of the ladder's steps are found (exit 2), not only agent.kind's", () => {
    const config = parseConfig({ escalation: { ladder: ['cheap', { agent: 'claude-code', model: 'opus' }] } });
    const tasks = [{ status: 'todo' as const }];
    const env = { PATH: '/nonexistent-ralph-test-path' };
    assert.throws(() => checkAgentsFound(tasks, config.agent, undefined, env, ladderOfConfig(config)), /Claude Code .*is not on PATH/);
    assert.deepEqual(checkAgentsFound(tasks, config.agent, undefined, env), [], "without the ladder: agent.kind's only");
    assert.deepEqual(checkAgentsFound(tasks, config.agent, 'builtin', env, ladderOfConfig(config)), [], '--agent builtin: no CLI');
    assert.deepEqual(checkAgentsFound([{ status: 'done' }], config.agent, undefined, env, ladderOfConfig(config)), []);
  });
});

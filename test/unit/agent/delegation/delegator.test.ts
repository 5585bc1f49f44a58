import assert from 'node:assert/strict';
import { createDelegationTools } from '../../../../src/core/agent/delegation/delegateTools';
import { Delegator } from '../../../../src/core/agent/delegation/delegator';
import { ToolRegistry } from '../../../../src/core/agent/toolRegistry';
import { parseConfig } from '../../../../src/core/config/load';
import { ConfigError } from '../../../../src/core/errors';
import { createModelClient } from '../../../../src/core/llm/factory';
import type { Step } from '../../../fixtures/scriptedServer';
import { type DelegationEnv, makeDelegationEnv, ofType, systemText, TASK_PROMPT } from './delegationEnv';

const FAILING_TESTS = `node -e "console.log('2 tests failing'); process.exit(1)"`;

function callTool(env: DelegationEnv, name: string, args: unknown) {
  return new ToolRegistry(createDelegationTools(env.delegator)).execute({ id: 'call-1', name, arguments: JSON.stringify(args) }, env.ctx);
}

describe('delegation to sub-agents (against the scripted server)', function () {
  let env: DelegationEnv;
  afterEach(async () => env?.cleanup());

  it('devo reads a file, runs a failing command: PARTIAL with [OK] and [ERROR] from its real tool log', async () => {
    env = await makeDelegationEnv([
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'README.md' } },
          { name: 'run_command', arguments: { command: FAILING_TESTS } },
        ],
      },
      { content: 'All done, every test passes.' },
    ]);
    const result = await callTool(env, 'delegate', {
      target: 'devo',
      objective: 'Fix the login bug',
      expectedOutcome: 'tests pass',
      expectedEvidence: ['git_commit'],
    });

    assert.equal(result.ok, true, 'partial is not an error result');
    assert.equal(
      result.content,
      [
        '[DELEGATION RESULT — DEVO]',
        'Objective: Fix the login bug',
        'Expected Outcome: tests pass',
        '',
        'Status: PARTIAL',
        'Evidence:',
        '  - [OK] read_file: read README.md (lines 1-1 of 1)',
        `  - [ERROR] run_command: ${FAILING_TESTS} (exit code 1)`,
        '  - [MISSING] git_commit: no commit created',
        '',
        'Agent Response:',
        'All done, every test passes.',
      ].join('\n'),
      'the claim "every test passes" does not change what the evidence says',
    );
    assert.ok(result.usage && result.usage.totalTokens > 0, 'the sub-agent usage is reported for the iteration');

    const [first] = env.server.requests;
    assert.match(systemText(first.body), /You are DEVO/);
    const brief = String(first.body?.messages?.[1].content);
    assert.match(brief, /# Objective\nFix the login bug/);
    assert.ok(brief.endsWith(`# The task this serves (its original request, verbatim)\n${TASK_PROMPT}`));
    const offered = (first.body?.tools ?? []).map((t) => t.function.name).sort();
    assert.deepEqual(offered, ['edit_file', 'escalate', 'git_commit', 'list_files', 'read_file', 'run_command', 'search', 'write_file']);

    const started = ofType(env.events, 'delegation.started');
    const finished = ofType(env.events, 'delegation.result');
    assert.equal(started.length, 1);
    assert.equal(finished.length, 1);
    assert.equal(finished[0].delegationId, started[0].delegationId);
    assert.equal(finished[0].status, 'partial');
    assert.equal(finished[0].envelope, result.content);
    assert.equal(finished[0].result.toolEvidence.length, 2);
    assert.equal(finished[0].model, 'model-a', "default: the orchestrator's model");
    const subEvents = ofType(env.events, 'tool.result');
    assert.deepEqual(
      subEvents.map((e) => [e.agent, e.tool, e.ok]),
      [
        ['devo', 'read_file', true],
        ['devo', 'run_command', false],
      ],
    );
    const responses = ofType(env.events, 'model.response');
    assert.ok(responses.every((e) => e.agent === 'devo'));
    assert.equal(
      responses.reduce((n, e) => n + e.usage.totalTokens, 0),
      result.usage?.totalTokens,
    );
  });

  it('a sub-agent that calls escalate stops there: ESCALATED with the reason in the envelope', async () => {
    env = await makeDelegationEnv([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
      {
        content: 'The config is missing.',
        toolCalls: [{ name: 'escalate', arguments: { reason: 'There is no database config; which database should I use?' } }],
      },
    ]);
    const result = await callTool(env, 'delegate', { target: 'devo', objective: 'Add a migration' });
    assert.match(result.content, /^Status: ESCALATED$/m);
    assert.match(
      result.content,
      /\n\nEscalation: There is no database config; which database should I use\?\n\nAgent Response:\nThe config is missing\.$/,
    );
    assert.match(result.content, /  - \[OK\] read_file: /);
    assert.doesNotMatch(result.content, /\] escalate/, 'escalate itself is not evidence');
    assert.equal(env.server.requests.length, 2, 'no model call after escalate');
    assert.equal(env.server.pending, 0);
  });

  it('a failed delegation is an error result; its own step limit is evidence', async () => {
    const broken: Step = { toolCalls: [{ name: 'edit_file', arguments: { path: 'missing.txt', oldText: 'a', newText: 'b' } }] };
    env = await makeDelegationEnv([broken, broken], { config: { agents: { devo: { maxSteps: 2 } } } });
    const result = await callTool(env, 'delegate', { target: 'devo', objective: 'Edit a file' });
    assert.equal(result.ok, false);
    assert.match(result.content, /^Status: FAILED$/m);
    assert.match(result.content, /  - \[ERROR\] step_limit: stopped after 2 model calls without finishing/);
    assert.equal(env.server.requests.length, 2);
  });

  it('refuses expectedEvidence the target can never produce, before any model call', async () => {
    env = await makeDelegationEnv([]);
    const result = await callTool(env, 'delegate', { target: 'scout', objective: 'Look', expectedEvidence: ['git_commit'] });
    assert.equal(result.ok, false);
    assert.match(result.content, /scout cannot call git_commit/);
    assert.equal(env.server.requests.length, 0);
  });

  it('applies profile overrides: model or tier, tools, system prompt; unknown tools fail at the start', async () => {
    const answer: Step = { content: '```json\n{"summary":"ok","confidence":"high"}\n```' };
    const look: Step = { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] };
    env = await makeDelegationEnv([look, answer, answer], {
      config: {
        agents: { scout: { tier: 1, tools: ['read_file'], systemPrompt: 'CUSTOM SCOUT PROMPT' }, devo: { model: 'special-model' } },
      },
    });
    const scout = await callTool(env, 'delegate', { target: 'scout', objective: 'Look' });
    assert.match(scout.content, /Status: SUCCESS/);
    const devo = await callTool(env, 'delegate', { target: 'devo', objective: 'Do' });
    assert.match(devo.content, /Status: SUCCESS/);
    const [scoutRequest, , devoRequest] = env.server.requests;
    assert.equal(scoutRequest.model, 'model-b', 'tier 1 of the ladder');
    assert.match(systemText(scoutRequest.body), /^CUSTOM SCOUT PROMPT\n\n.*escalate/s);
    assert.match(systemText(scoutRequest.body), /```json/, 'the protocol rules stay with a custom prompt');
    assert.deepEqual(
      (scoutRequest.body?.tools ?? []).map((t) => t.function.name),
      ['read_file', 'escalate'],
    );
    assert.equal(devoRequest.model, 'special-model');

    const config = parseConfig({ agents: { devo: { tools: ['read_file', 'ralph_complete', 'delegate'] } } });
    assert.throws(
      () => new Delegator({ config, model: createModelClient(config.llm, 'k') }),
      (error: unknown) => error instanceof ConfigError && /agents\.devo\.tools names "ralph_complete", "delegate"/.test(error.message),
    );
  });

  it('delegate_parallel runs at most agents.maxParallel at once; each result its own envelope, in order, long ones cut with a marker', async () => {
    let running = 0;
    let peak = 0;
    // each call waits until two ran at once (bounded): two at once is then certain, not a matter of the machine's speed
    let twoRan!: () => void;
    const twoAtOnce = new Promise<void>((resolve) => (twoRan = resolve));
    const scoutStep: Step = async (request) => {
      running++;
      peak = Math.max(peak, running);
      if (running >= 2) twoRan();
      await Promise.race([twoAtOnce, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      await new Promise((resolve) => setTimeout(resolve, 60)); // a while at work, where a third would show if let in
      running--;
      const objective = /# Objective\n(.*)/.exec(String(request.body?.messages?.[1].content))?.[1] ?? '';
      // a scout shows it looked before it answers (without it, its result is at most PARTIAL)
      if (!request.body?.messages?.some((m) => m.role === 'tool')) return { toolCalls: [{ name: 'list_files', arguments: {} }] };
      const summary = objective === 'area 3' ? 'y'.repeat(5000) : `looked at ${objective}`;
      return { content: `\`\`\`json\n${JSON.stringify({ summary, confidence: 'medium' })}\n\`\`\`` };
    };
    env = await makeDelegationEnv(
      Array.from({ length: 10 }, () => scoutStep),
      { config: { agents: { maxParallel: 2 } } },
    );
    const delegations = [1, 2, 3, 4, 5].map((n) => ({ target: 'scout', objective: `area ${n}` }));
    const result = await callTool(env, 'delegate_parallel', { delegations });

    assert.equal(peak, 2, 'never more than two sub-agents at once');
    assert.equal(env.server.requests.length, 10);
    const envelopes = result.content.split(/\n\n(?=\[DELEGATION RESULT)/);
    assert.equal(envelopes.length, 5);
    envelopes.forEach((envelope, i) => assert.ok(envelope.startsWith(`[DELEGATION RESULT — SCOUT]\nObjective: area ${i + 1}\n`)));
    assert.match(envelopes[2], /y{2400}\n… \[truncated: \d+ more characters\]$/);
    assert.match(envelopes[0], /Agent Response:\nlooked at area 1\nConfidence: medium$/);
    assert.equal(result.summary, 'scout SUCCESS, scout SUCCESS, scout SUCCESS, scout SUCCESS, scout SUCCESS');
    assert.equal(ofType(env.events, 'delegation.result').length, 5);
  });
});

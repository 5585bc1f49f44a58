import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/core/config/load';
import type { RalphConfigInput } from '../../../src/core/config/schema';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../../src/core/gates/types';
import { agentGateRuns } from '../../../src/core/loop/task/agentGateRuns';

/** Records the gate runs asked of it; each passes at once with its command in the output. */
class RecordingGates implements GateRunner {
  readonly asked: GateRunRequest[] = [];
  run(request: GateRunRequest): Promise<GateRunResult> {
    this.asked.push(request);
    return Promise.resolve({ exitCode: 0, timedOut: false, aborted: false, output: `ran ${request.gate.command}\n`, durationMs: 1 });
  }
}

describe("the agent's run of a gate's command (agentGateRuns)", () => {
  const options = { cwd: '/work/project', timeoutMs: 60_000, signal: new AbortController().signal };
  const setup = (extra: RalphConfigInput = {}) => {
    const gates = new RecordingGates();
    const config = parseConfig({
      gates: [
        { name: 'tests', command: 'npm test', kind: 'tests', required: true },
        { name: 'live', command: 'npm run e2e', kind: 'tests', required: true, reuse: false },
      ],
      ...extra,
    });
    return { gates, runs: agentGateRuns({ config, gates }, { id: 'T-001', check: 'node check.js' }) };
  };

  it("runs exactly a gate's command (trimmed) or the task's check as that gate, for the task, taking passing results only", async () => {
    const { gates, runs } = setup();
    const run = await runs.run('  npm test ', options);
    assert.deepEqual(run && { gate: run.gate, exitCode: run.exitCode, reused: run.reused }, { gate: 'tests', exitCode: 0, reused: false });
    assert.equal(gates.asked[0].gate.name, 'tests');
    assert.equal(gates.asked[0].reuse, 'passing');
    assert.equal(gates.asked[0].taskId, 'T-001');
    assert.equal(gates.asked[0].cwd, options.cwd);
    assert.equal((await runs.run('node check.js', options))?.gate, 'check');
  });

  it('anything else is the agent’s own command: another command line, another environment, a gate with reuse: false, a command the policy refuses or asks about', async () => {
    const { gates, runs } = setup();
    for (const command of [
      'FOO=1 npm test',
      'env FOO=1 npm test',
      'export FOO=1; npm test',
      'npm test | tail -5',
      'npm test -- --grep x',
      'npm run e2e',
    ])
      assert.equal(await runs.run(command, options), undefined, command);
    const denied = setup({ commands: { deny: ['npm test'] } });
    assert.equal(await denied.runs.run('npm test', options), undefined, 'refused: the policy says so when it runs as the agent’s');
    const asked = setup({ commands: { requireApproval: ['npm *'] } });
    assert.equal(await asked.runs.run('npm test', options), undefined, 'a person is asked as for any command');
    const semi = setup({ loop: { mode: 'semi-auto' } });
    assert.equal(await semi.runs.run('npm test', options), undefined);
    assert.equal(gates.asked.length + denied.gates.asked.length + asked.gates.asked.length + semi.gates.asked.length, 0);
  });
});

import assert from 'node:assert/strict';
import { type CliIo, cliSafeguards } from '../../../src/cli/main';
import type { SafeguardWarning } from '../../../src/core/ports';

const warning = (code: SafeguardWarning['code']): SafeguardWarning => ({
  code,
  taskId: 'T-001',
  message: 'm',
  iteration: 8,
  maxIterations: 10,
});
const io = (answers?: boolean[]): CliIo & { asked: string[] } => {
  const asked: string[] = [];
  return {
    asked,
    out() {},
    err() {},
    cwd: '/',
    onInterrupt: () => () => {},
    confirm: answers ? async (question: string) => (asked.push(question), answers.shift() ?? false) : undefined,
  };
};

describe('CLI safeguard answers', () => {
  it('applies safeguards.onWarning when no terminal can answer, and stops on repeated errors', async () => {
    assert.deepEqual(await cliSafeguards('continue', io()).decide(warning('no-commits')), { action: 'continue' });
    assert.deepEqual(await cliSafeguards('stop', io()).decide(warning('iteration-ratio')), { action: 'stop' });
    assert.deepEqual(await cliSafeguards('continue', io()).decide(warning('error-threshold')), { action: 'stop' });
  });

  it('asks on a terminal: raise the limit, or continue/stop', async () => {
    const terminal = io([true, false, true]);
    const prompt = cliSafeguards('continue', terminal);
    assert.deepEqual(await prompt.decide(warning('iteration-ratio')), { action: 'increase', by: 5 });
    assert.deepEqual(await prompt.decide(warning('no-commits')), { action: 'stop' });
    assert.deepEqual(await prompt.decide(warning('error-threshold')), { action: 'continue' });
    assert.match(terminal.asked[0], /Raise the limit by 5 to 15\?/);
  });
});

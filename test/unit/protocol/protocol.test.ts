import * as assert from 'node:assert/strict';
import { parseWebviewMessage } from '../../../src/protocol/protocolSchema';

describe('progress panel protocol (webview → host)', () => {
  const valid: unknown[] = [
    { type: 'ready' },
    { type: 'ready', seq: 12 },
    { type: 'applied', seq: 3, digest: 'a1-0badf00d' },
    { type: 'resync', reason: 'gap' },
    { type: 'command', command: 'retryTask', taskId: 'T-001' },
    { type: 'command', command: 'pause' },
    { type: 'warningAction', warningId: 'run-1:7', action: 'continue' },
    { type: 'openFile', path: '.ralph/reports/T-001/final.md' },
  ];
  for (const message of valid) {
    it(`accepts ${JSON.stringify(message)}`, () => assert.equal(parseWebviewMessage(message).ok, true));
  }

  const invalid: [string, unknown][] = [
    ['not an object', 'ready'],
    ['no type', { seq: 1 }],
    ['an unknown type', { type: 'eval', code: '1' }],
    ['an extra key', { type: 'ready', extra: true }],
    ['a negative sequence number', { type: 'applied', seq: -1, digest: 'x' }],
    ['a command not offered to the panel', { type: 'command', command: 'setApiKey' }],
    ['an arbitrary VS Code command', { type: 'command', command: 'workbench.action.terminal.new' }],
    ['a task id with a path in it', { type: 'command', command: 'retryTask', taskId: '../x' }],
    ['an unknown warning action', { type: 'warningAction', warningId: 'w', action: 'rm -rf' }],
    ['a file outside the reports', { type: 'openFile', path: '.ralph/config.json' }],
    ['a path that climbs out', { type: 'openFile', path: '.ralph/reports/../../etc/passwd.md' }],
    ['an absolute path', { type: 'openFile', path: '/etc/passwd' }],
  ];
  for (const [what, message] of invalid) {
    it(`rejects ${what}`, () => {
      const parsed = parseWebviewMessage(message);
      assert.equal(parsed.ok, false);
      if (!parsed.ok) assert.ok(parsed.error.length > 0);
    });
  }
});

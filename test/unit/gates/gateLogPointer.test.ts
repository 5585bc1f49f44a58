import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { gateLogPointer } from '../../../src/core/gates/runGates';

describe('gateLogPointer', () => {
  const root = path.resolve('/work/project');

  it('names the log relative to the working folder when it is inside it (read_file reaches it)', () => {
    const log = path.join(root, '.ralph/reports/T-1/gates/iteration-2-test.log');
    assert.equal(gateLogPointer('test', root, log), 'full output of test: .ralph/reports/T-1/gates/iteration-2-test.log');
  });

  it("names the absolute path and a command that reads it from a parallel task's worktree", () => {
    const worktree = path.join(root, '.ralph/worktrees/T-1');
    const log = path.join(root, '.ralph/reports/T-1/gates/iteration-2-test.log');
    const text = gateLogPointer('test', worktree, log);
    assert.ok(!text.includes('..'), text);
    assert.ok(text.includes(`tail -n 200 '${log}'`), text);
    assert.ok(text.startsWith(`full output of test: ${log} — outside your working folder`), text);
  });
});

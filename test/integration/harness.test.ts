import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';

describe('integration harness', () => {
  it('runs inside a real extension host with the fixture workspace open', () => {
    assert.match(vscode.version, /^\d+\.\d+\.\d+/);
    const expected = process.env.RALPH_TEST_WORKSPACE;
    assert.ok(expected, 'RALPH_TEST_WORKSPACE reaches the extension host');
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1);
    assert.equal(path.resolve(folders[0]!.uri.fsPath), path.resolve(expected));
  });
});

import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GateReport } from '../../src/core/gates/types';
import type { RalphExtensionApi } from '../../src/extension';
import { waitFor } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

describe('quality gates through the VS Code Tasks API', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

  before(async () => {
    await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
  });

  it('runs a gate as a `ralph` task, captures its output, and returns its exit code and parsed counts', async () => {
    const script = "console.log('gate says hello'); console.log('2 passed, 1 failed'); process.exit(1)";
    const config = { gates: [{ name: 'it-tests', command: `node -e "${script}"`, kind: 'tests', required: true }] };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));

    const started: vscode.TaskDefinition[] = [];
    const ended: vscode.TaskDefinition[] = [];
    const listeners = [
      vscode.tasks.onDidStartTask((e) => started.push(e.execution.task.definition)),
      vscode.tasks.onDidEndTask((e) => ended.push(e.execution.task.definition)),
    ];
    let report: GateReport;
    try {
      report = (await vscode.commands.executeCommand('ralph.runGates')) as GateReport;
      // VS Code reports the task's end after the pseudoterminal has closed, a moment later (through the workbench)
      await waitFor('the gate task to end', () => ended.length > 0, 60_000);
    } finally {
      listeners.forEach((l) => l.dispose());
    }
    assert.ok(report, 'Run Quality Gates returns the gate report');
    const [outcome] = report.outcomes;
    assert.equal(outcome.name, 'it-tests');
    assert.equal(outcome.exitCode, 1);
    assert.equal(outcome.passed, false);
    assert.deepEqual(outcome.parsed.tests && { passed: outcome.parsed.tests.passed, failed: outcome.parsed.tests.failed }, {
      passed: 2,
      failed: 1,
    });
    assert.equal(report.requiredPassed, false);
    // each run is its own task (`run`: a counter), so parallel agents and the merge queue can run one gate at once
    const named = (defs: vscode.TaskDefinition[]) => defs.map(({ type, gate, run }) => ({ type, gate, run: typeof run }));
    assert.deepEqual(named(started), [{ type: 'ralph', gate: 'it-tests', run: 'number' }], 'the gate ran as a VS Code task');
    assert.deepEqual(named(ended), [{ type: 'ralph', gate: 'it-tests', run: 'number' }]);
  });

  it('offers every configured gate under Run Task', async () => {
    const config = {
      gates: [
        { name: 'lint', command: 'node -e "0"', kind: 'lint' },
        { name: 'unit', command: 'node -e "0"', kind: 'tests' },
      ],
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));
    const tasks = await vscode.tasks.fetchTasks({ type: 'ralph' });
    assert.deepEqual(tasks.map((t) => t.name).sort(), ['gate: lint', 'gate: unit']);
    assert.equal(tasks.find((t) => t.name === 'gate: unit')?.detail, 'node -e "0"');
  });
});

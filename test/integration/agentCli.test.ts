/**
 * An agent CLI in the editor (issue 46): *Ralph: Select Agent* writes `agent.kind` and the status
 * bar names the agent; Start Autopilot runs the iteration as one headless session of the real,
 * pinned Claude Code (test/unit/helpers/agentClis.ts) against a scripted Anthropic Messages server
 * this test starts in the extension host. The CLI's environment (its endpoint, a home of its own)
 * reaches it through `agent.env`, as a person's would. Nothing stands in for the CLI.
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import type { TaskView } from '../../src/protocol/panelState';
import { type AnthropicServer, startAnthropicServer } from '../fixtures/anthropicServer';
import { waitFor } from '../helpers/waitFor';
import { bash, claudeEnv, mcpComplete, sessionAgent } from '../unit/helpers/agentCliRun';
import { agentCliOrSkip } from '../unit/helpers/agentClis';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

/** `agent.env`: the variables of the CLI's environment, strings only. */
function stringsOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

describe('agent CLIs in the editor: Claude Code (the real CLI, a scripted Anthropic endpoint)', function () {
  this.timeout(240_000);
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const configFile = () => path.join(workspace(), '.ralph', 'config.json');
  const tasksFile = () => path.join(workspace(), '.ralph', 'tasks.json');
  let api: RalphExtensionApi;
  let claude: string;
  let server: AnthropicServer | undefined;
  let home: string | undefined;
  let originalConfig: string;
  let originalTasks: string;

  before(async function () {
    claude = agentCliOrSkip('claude-code', this).bin;
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    originalConfig = await fs.readFile(configFile(), 'utf8');
    originalTasks = await fs.readFile(tasksFile(), 'utf8');
    // the status bar names the agent only while Ralph is idle or running: no task waits for the person
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    // the session: write a file with Bash, COMPLETE through Ralph's MCP tool, a last word
    const plan = [[bash('echo "made by Claude Code" > agent-cli.txt'), mcpComplete('agent-cli.txt written'), { text: 'Done.' }]];
    server = await startAnthropicServer({ steps: Array.from({ length: 20 }, () => sessionAgent(plan)) });
    const made = await claudeEnv(server.url);
    home = made.home;
    const config = {
      agent: { kind: 'builtin', command: claude, env: stringsOnly(made.env) },
      loop: { maxIterations: 2 },
    };
    await fs.writeFile(configFile(), JSON.stringify(config, null, 2));
  });
  after(async () => {
    // the suites share one workspace: leave it as it was found
    if (originalConfig !== undefined) await fs.writeFile(configFile(), originalConfig);
    if (originalTasks !== undefined) await fs.writeFile(tasksFile(), originalTasks);
    await server?.close();
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('Select Agent with a preset writes agent.kind to .ralph/config.json, and the status bar names Claude Code', async () => {
    await waitFor('the status bar without an agent CLI', () => !/Claude Code/.test(api.statusBar!.text), 30_000);
    const choice = await vscode.commands.executeCommand('ralph.selectAgent', { kind: 'claude-code' });
    assert.deepEqual(choice, { kind: 'claude-code' });
    const written = JSON.parse(await fs.readFile(configFile(), 'utf8'));
    assert.equal(written.agent.kind, 'claude-code');
    assert.equal(written.agent.command, claude, 'the rest of agent is kept');
    const text = await waitFor('the status bar to name the agent', () =>
      /Claude Code/.test(api.statusBar!.text) ? api.statusBar!.text : false,
    );
    assert.match(text, /^\$\(debug-start\) Ralph.* · Claude Code$/);
  });

  it("Start Autopilot: one Claude Code session takes the task to done; the panel shows the CLI's tool calls and names the agent", async () => {
    const task = (await vscode.commands.executeCommand('ralph.addTask', {
      title: 'Write with Claude Code',
      prompt: 'Create agent-cli.txt',
      promise: 'agent-cli.txt exists',
    })) as { id: string };
    const summary = (await vscode.commands.executeCommand('ralph.startAutopilot')) as { results: { taskId: string; status: string }[] };
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[task.id, 'done']],
    );
    assert.equal(await fs.readFile(path.join(workspace(), 'agent-cli.txt'), 'utf8'), 'made by Claude Code\n');
    assert.ok(server!.mainRequests.length >= 3, `the CLI talked to the scripted endpoint (${server!.mainRequests.length} turns)`);

    const view = await waitFor('the task done in the panel', () =>
      api.panelModel!.state.tasks.find((t: TaskView) => t.id === task.id && t.status === 'done'),
    );
    assert.equal(view.iterations.length, 1);
    assert.match(view.iterations[0].model, /^Claude Code: /);
    const tools = view.stream.flatMap((entry) => (entry.kind === 'tool' ? [entry] : []));
    assert.deepEqual(
      tools.map((t) => t.tool),
      ['Bash', 'mcp__ralph__ralph_complete'],
      JSON.stringify(view.stream),
    );
    assert.match(tools[0].args, /agent-cli\.txt/);
    assert.ok(
      tools.every((t) => t.ok === true),
      `every tool call succeeded: ${JSON.stringify(tools)}`,
    );
    assert.doesNotMatch(api.statusBar!.text, /sync~spin/);
  });
});

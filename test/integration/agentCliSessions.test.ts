/**
 * More agent CLIs in the editor (issue 46), beside agentCli.test.ts's Claude Code: the real, pinned
 * Gemini CLI against the scripted Gemini API server and the real, pinned Copilot CLI (offline)
 * against the scripted OpenAI-compatible server, both started in the extension host. Each runs one
 * task of its own with *Run Selected Task* (the suites share one workspace and task store): the
 * session calls a shell tool and Ralph's MCP `ralph_complete`, and the panel shows those tool
 * calls, the agent and its model, and the verdict. The CLI's environment (its endpoint, a home of
 * its own) reaches it through `agent.env`, as a person's would. Nothing stands in for the CLI.
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CliAgentKind } from '../../src/core/agentKinds';
import type { RalphExtensionApi } from '../../src/extension';
import type { TaskView } from '../../src/protocol/panelState';
import { startGeminiServer } from '../fixtures/geminiServer';
import { startScriptedServer } from '../fixtures/scriptedServer';
import { waitFor } from '../helpers/waitFor';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import { COPILOT_MODEL, copilotAgent, copilotEnv, cpBash, cpComplete } from '../unit/helpers/copilotCli';
import { gComplete, GEMINI_MODEL, geminiAgent, geminiEnv, gShell } from '../unit/helpers/geminiRun';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

/** `agent.env`: the variables of the CLI's environment, strings only. */
function stringsOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** A CLI's scripted endpoint, started for one session: its environment, how many model turns it served, how to close it. */
interface Endpoint {
  env: NodeJS.ProcessEnv;
  home: string;
  turns(): number;
  close(): Promise<void>;
}

/** What differs from one CLI to the next. */
interface CliCase {
  kind: CliAgentKind;
  label: string;
  model: string;
  /** The file the session writes with its shell tool. */
  file: string;
  /** The scripted endpoint whose agent writes `file` with `command`, then calls `ralph_complete`. */
  serve(command: string): Promise<Endpoint>;
  /** The tool calls the panel shows, by the names the CLI gives them. */
  tools: [string, string];
}

const CASES: CliCase[] = [
  {
    kind: 'gemini',
    label: 'Gemini CLI',
    model: GEMINI_MODEL,
    file: 'gemini-cli.txt',
    serve: async (command) => {
      const plan = [[gShell(command), gComplete('gemini-cli.txt written'), { text: 'Done.' }]];
      const server = await startGeminiServer({ steps: Array.from({ length: 20 }, () => geminiAgent(plan)) });
      const { env, home } = await geminiEnv(server.url);
      return { env, home, turns: () => server.turns.length, close: () => server.close() };
    },
    tools: ['run_shell_command', 'mcp_ralph_ralph_complete'],
  },
  {
    kind: 'copilot',
    label: 'Copilot CLI',
    model: COPILOT_MODEL,
    file: 'copilot-cli.txt',
    serve: async (command) => {
      const plan = [[cpBash(command), cpComplete('copilot-cli.txt written'), { text: 'Done.' }]];
      const server = await startScriptedServer({ steps: Array.from({ length: 20 }, () => copilotAgent(plan)) });
      const { env, home } = await copilotEnv(server.url);
      return { env, home, turns: () => server.requests.length, close: () => server.close() };
    },
    tools: ['bash', 'ralph-ralph_complete'],
  },
];

/** On a failure: the run log's iteration ends, warnings and errors of `taskId` (the newest log), for the message. */
async function whatTheRunSaid(taskId: string): Promise<string> {
  const dir = path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.ralph', 'runs');
  const logs = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.ndjson')).sort();
  const newest = logs.at(-1);
  if (!newest) return 'no run log';
  const lines = (await fs.readFile(path.join(dir, newest), 'utf8')).split('\n').filter(Boolean);
  const said = lines.filter((l) => l.includes(taskId) && /"type":"(iteration\.finished|warning|error|task\.finished)"/.test(l));
  return `the run log (${newest}) of ${taskId}:\n${said.slice(-8).join('\n')}`;
}

for (const cli of CASES) {
  describe(`agent CLIs in the editor: ${cli.label} (the real CLI, a scripted endpoint)`, function () {
    this.timeout(240_000);
    const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
    const configFile = () => path.join(workspace(), '.ralph', 'config.json');
    const tasksFile = () => path.join(workspace(), '.ralph', 'tasks.json');
    let api: RalphExtensionApi;
    let endpoint: Endpoint | undefined;
    let originalConfig: string;
    let originalTasks: string;

    before(async function () {
      const command = agentCliOrSkip(cli.kind, this).bin;
      api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
      await vscode.commands.executeCommand('ralph.initWorkspace');
      originalConfig = await fs.readFile(configFile(), 'utf8');
      originalTasks = await fs.readFile(tasksFile(), 'utf8');
      endpoint = await cli.serve(`echo "made by ${cli.label}" > ${cli.file}`);
      const config = {
        agent: { kind: cli.kind, command, model: cli.model, env: stringsOnly(endpoint.env) },
        loop: { maxIterations: 2 },
      };
      await fs.writeFile(configFile(), JSON.stringify(config, null, 2));
    });
    after(async () => {
      // the suites share one workspace: leave it as it was found
      if (originalConfig !== undefined) await fs.writeFile(configFile(), originalConfig);
      if (originalTasks !== undefined) await fs.writeFile(tasksFile(), originalTasks);
      await endpoint?.close();
      if (endpoint) await fs.rm(endpoint.home, { recursive: true, force: true });
    });

    it(`Run Selected Task: one ${cli.label} session takes its task to done; the panel shows its shell and MCP tool calls, the agent and its model`, async () => {
      const task = (await vscode.commands.executeCommand('ralph.addTask', {
        title: `Write with ${cli.label}`,
        prompt: `Create ${cli.file}`,
        promise: `${cli.file} exists`,
      })) as { id: string };
      // this task alone: the suites share one workspace, whose store may hold other suites' tasks
      const summary = (await vscode.commands.executeCommand('ralph.runSelectedTask', task.id)) as {
        results: { taskId: string; status: string }[];
      };
      assert.deepEqual(
        summary.results.map((r) => [r.taskId, r.status]),
        [[task.id, 'done']],
        await whatTheRunSaid(task.id),
      );
      assert.equal(await fs.readFile(path.join(workspace(), cli.file), 'utf8'), `made by ${cli.label}\n`);
      assert.ok(endpoint!.turns() >= 3, `the CLI talked to the scripted endpoint (${endpoint!.turns()} turns)`);

      const view = await waitFor('the task done in the panel', () =>
        api.panelModel!.state.tasks.find((t: TaskView) => t.id === task.id && t.status === 'done'),
      );
      assert.equal(view.iterations.length, 1);
      const [iteration] = view.iterations;
      assert.equal(iteration.agent, cli.label);
      assert.equal(iteration.model, `${cli.label}: ${cli.model}`);
      assert.equal(iteration.outcome, 'complete', JSON.stringify(iteration));
      assert.equal(view.agent, cli.label);
      const tools = view.stream.flatMap((entry) => (entry.kind === 'tool' ? [entry] : []));
      assert.deepEqual(
        tools.map((t) => t.tool),
        cli.tools,
        JSON.stringify(view.stream),
      );
      assert.ok(tools[0].args.includes(cli.file), tools[0].args);
      assert.ok(
        tools.every((t) => t.ok === true),
        `every tool call succeeded: ${JSON.stringify(tools)}`,
      );
    });
  });
}

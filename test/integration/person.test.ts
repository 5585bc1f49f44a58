/**
 * The person in the loop in the real extension host (issue 21): a question answered from the
 * progress panel reaches the next iteration's request and the task finishes; Stop then Start
 * Autopilot resumes the task; Unblock; Increase Limit after a time-out by the clock; manual
 * review — Show Changes opens the multi-file diff, Request Changes (the agent's next request
 * carries the feedback), Approve lands it, Reject drops it; the tree's Needs you and Ready for
 * review groups and the status bar's counts. Against the scripted model server, on real git.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphEvent } from '../../src/core/events';
import type { RalphExtensionApi } from '../../src/extension';
import type { TaskNode, TaskTreeNode } from '../../src/ui/taskTree';
import { type RecordedRequest, type ScriptedServer, startScriptedServer, type Step } from '../fixtures/scriptedServer';
import { waitFor as waitUntil } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_PERSON_TEST_KEY';
const waitFor = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) => waitUntil(what, probe, 120_000);
const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: workspace(), encoding: 'utf8' }).trim();
const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'written' } }] };

type RunResult = { results: { taskId: string; status: string }[] } | undefined;

function text(request: RecordedRequest): string {
  return (request.body?.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')))
    .join('\n');
}

function chats(server: ScriptedServer): RecordedRequest[] {
  return server.requests.filter((r) => r.path.endsWith('/chat/completions'));
}

function taskNodes(api: RalphExtensionApi): TaskNode[] {
  const tree = api.tree!;
  return (tree.getChildren() as TaskTreeNode[]).flatMap((group) => tree.getChildren(group) as TaskNode[]);
}

function groups(api: RalphExtensionApi): string[] {
  return (api.tree!.getChildren() as TaskTreeNode[]).map((g) => String(api.tree!.getTreeItem(g).label));
}

describe('the person in the loop (real extension host)', function () {
  this.timeout(300_000);
  let api: RalphExtensionApi;
  let server: ScriptedServer | undefined;
  let configBefore: string;
  const configFile = () => path.join(workspace(), '.ralph', 'config.json');

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    process.env[KEY_ENV] = 'sk-person-test';
    configBefore = await fs.readFile(configFile(), 'utf8');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  after(async () => {
    // the suites share one workspace: no task and the configuration as found
    await fs.writeFile(path.join(workspace(), '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    await api.tree!.refresh();
    await fs.writeFile(configFile(), configBefore);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  async function start(steps: Step[], extra: Record<string, unknown> = {}): Promise<void> {
    server = await startScriptedServer({ steps });
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 },
      loop: { maxIterations: 5, maxParallel: 1 },
      ...extra,
    };
    await fs.writeFile(configFile(), JSON.stringify(config, null, 2));
    await fs.writeFile(path.join(workspace(), '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    await api.tree!.refresh();
  }

  async function addTask(title: string, prompt: string): Promise<string> {
    return ((await vscode.commands.executeCommand('ralph.addTask', { title, prompt, promise: 'it is written' })) as { id: string }).id;
  }

  const autopilot = () => vscode.commands.executeCommand('ralph.startAutopilot') as Thenable<RunResult>;

  it('a question answered from the panel: Needs you, "1 question", then the next request carries the answer and the task is done', async () => {
    await start([
      { content: 'Which one? <ralph>NEEDS_HELP:Which file name should the greeting use?</ralph>' },
      (request: RecordedRequest) =>
        /A \(.*\): greeting\.txt, please/.test(text(request))
          ? { toolCalls: [{ name: 'write_file', arguments: { path: 'greeting.txt', content: 'hi\n' } }] }
          : { content: '<ralph>BLOCKED:the answer was not in my context</ralph>' },
      complete,
    ]);
    const id = await addTask('Greet', 'Write the greeting');
    const first = await autopilot();
    assert.deepEqual(
      first?.results.map((r) => r.status),
      ['needs_help'],
    );
    await waitFor('the Needs you group', () => groups(api).includes('Needs you (1)'));
    const node = taskNodes(api).find((n) => n.task.id === id)!;
    assert.equal(api.tree!.getTreeItem(node).description, 'asks: Which file name should the greeting use?');
    await waitFor('"1 question" in the status bar', () => /Ralph · 1 question$/.test(api.statusBar!.text));
    await waitFor(
      'the question on the panel',
      () => api.panelModel!.state.tasks.find((t) => t.id === id)?.questions?.[0]?.question === 'Which file name should the greeting use?',
    );

    // the panel's answer box sends this message (the same door the webview uses)
    assert.ok(await api.panel!.receive({ type: 'answer', taskId: id, text: 'greeting.txt, please' }));
    await waitFor('the task answered and ready', async () => (await readTask(id)).status === 'halted');
    const second = await autopilot();
    assert.deepEqual(
      second?.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    assert.match(text(chats(server!)[1]), /\[ANSWERS FROM THE PERSON — pinned\][\s\S]*Which file name[\s\S]*greeting\.txt, please/);
    assert.equal(await fs.readFile(path.join(workspace(), 'greeting.txt'), 'utf8'), 'hi\n');
    // an empty answer is refused at the panel's door
    assert.equal(await api.panel!.receive({ type: 'answer', taskId: id, text: '   ' }), false);
  });

  it('Stop keeps the work; Start Autopilot resumes the task instead of skipping it', async () => {
    let asked!: () => void;
    const held = new Promise<void>((resolve) => (asked = resolve));
    await start(
      [
        async () => {
          asked();
          await new Promise((resolve) => setTimeout(resolve, 60_000));
          return { content: 'too late' };
        },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'stopped.txt', content: 'resumed\n' } }] },
        complete,
      ],
      { loop: { maxIterations: 5, maxParallel: 1, windDownSeconds: 0 } },
    );
    const id = await addTask('Be stopped', 'Write stopped.txt');
    const run = autopilot();
    await held;
    await vscode.commands.executeCommand('ralph.stop');
    assert.deepEqual(
      (await run)?.results.map((r) => r.status),
      ['halted'],
    );
    const events: RalphEvent[] = [];
    const subscription = api.bus.subscribe((e) => events.push(e));
    const resumed = await autopilot();
    subscription.dispose();
    assert.deepEqual(
      resumed?.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    assert.equal(
      events.find((e) => e.type === 'task.started')?.type === 'task.started' &&
        (events.find((e) => e.type === 'task.started') as { resumed: boolean }).resumed,
      true,
      'resumed from its checkpoint',
    );
  });

  it('Unblock returns a blocked task to the ready set: Start Autopilot resumes it', async () => {
    await start([
      { content: '<ralph>BLOCKED:the fixtures folder is missing</ralph>' },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'unblocked.txt', content: 'ok\n' } }] },
      complete,
    ]);
    const id = await addTask('Unblock me', 'Write unblocked.txt');
    assert.deepEqual(
      (await autopilot())?.results.map((r) => r.status),
      ['blocked'],
    );
    const unblocked = (await vscode.commands.executeCommand('ralph.unblockTask', id)) as { status: string };
    assert.equal(unblocked.status, 'halted');
    assert.deepEqual(
      (await autopilot())?.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
  });

  it('Increase Limit after a time-out by the clock raises the minutes, says so, and the task then finishes', async () => {
    await start(
      [
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          return { content: 'slow start <ralph>PROGRESS:10</ralph>' };
        },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'in-time.txt', content: 'ok\n' } }] },
        complete,
      ],
      { loop: { maxIterations: 5, maxParallel: 1, taskTimeoutMinutes: 0.01, windDownSeconds: 0 } },
    );
    const id = await addTask('Slow start', 'Write in-time.txt');
    assert.deepEqual(
      (await autopilot())?.results.map((r) => r.status),
      ['timeout'],
    );
    const asked: string[] = [];
    const prompts = api.setPrompts({ input: async (options) => (asked.push(String(options.prompt)), '5') });
    let raised: { status: string; timeoutMinutes?: number; maxIterations?: number };
    try {
      raised = (await vscode.commands.executeCommand('ralph.increaseMaxIterations', id)) as typeof raised;
    } finally {
      prompts.dispose();
    }
    assert.match(asked[0], /timed out on its time limit \(0\.01 min\)\. Add how many minutes\?/);
    assert.equal(raised.status, 'halted');
    assert.ok((raised.timeoutMinutes ?? 0) >= 5, `timeoutMinutes ${raised.timeoutMinutes}`);
    assert.equal(raised.maxIterations, undefined, 'the iteration limit is not what ended it');
    assert.deepEqual(
      (await autopilot())?.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
      'not timed out again at once',
    );
  });

  it('manual review: Ready for review and "2 to review"; Show Changes opens the diff; Request Changes reaches the agent; Approve lands; Reject drops', async () => {
    const writer: Step = (request: RecordedRequest) => {
      const messages = request.body?.messages ?? [];
      const user = text({ ...request, body: { ...request.body, messages: messages.filter((m) => m.role === 'user') } } as RecordedRequest);
      const match = /WRITE (\S+) <<(.*?)>>/s.exec(user);
      if (!match) throw new Error(`no instruction in ${user.slice(0, 100)}`);
      if (messages.at(-1)?.role === 'tool') return complete as Exclude<Step, (r: RecordedRequest) => unknown>;
      return { toolCalls: [{ name: 'write_file', arguments: { path: match[1], content: /USE (\S+)/.exec(user)?.[1] ?? match[2] } }] };
    };
    await start(
      Array.from({ length: 16 }, () => writer),
      { loop: { maxIterations: 4, maxParallel: 2 }, merge: { review: 'manual' } },
    );
    const keep = await addTask('Write kept', 'WRITE kept.txt <<draft>>');
    const drop = await addTask('Write dropped', 'WRITE dropped.txt <<nope>>');
    const main = git('rev-parse', 'HEAD');
    const first = await autopilot();
    assert.deepEqual(first?.results.map((r) => r.status).sort(), ['review', 'review']);
    assert.equal(git('rev-parse', 'HEAD'), main, 'nothing landed before the review');
    await waitFor('the Ready for review group', () => groups(api).includes('Ready for review (2)'));
    await waitFor('"2 to review" in the status bar', () => /Ralph · 2 to review$/.test(api.statusBar!.text));
    await waitFor('review rows in the panel', () => api.panelModel!.state.queue.filter((q) => q.state === 'review').length === 2);

    const shown = (await vscode.commands.executeCommand('ralph.showChanges', keep)) as {
      kind: string;
      files: { path: string }[];
      title: string;
    };
    assert.equal(shown.kind, 'would-land');
    assert.ok(shown.files.some((f) => f.path === 'kept.txt'));
    const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    await waitUntil('the multi-file diff editor', () => tabs().some((t) => t.label.startsWith(shown.title)), 30_000).catch(
      (error: Error) => {
        throw new Error(
          `${error.message}; tabs: ${tabs()
            .map((t) => `${t.label} (${t.input?.constructor?.name})`)
            .join(', ')}`,
        );
      },
    );

    assert.ok(await api.panel!.receive({ type: 'requestChanges', taskId: keep, text: 'USE final' }));
    await waitFor('sent back to its agent', async () => (await readTask(keep)).status === 'halted');
    const requestsBefore = chats(server!).length;
    assert.deepEqual(
      (await autopilot())?.results.map((r) => [r.taskId, r.status]),
      [[keep, 'review']],
    );
    assert.match(text(chats(server!)[requestsBefore]), /changes requested:\n\s+USE final/);

    const approved = (await vscode.commands.executeCommand('ralph.approveTask', keep)) as { kind: string };
    assert.equal(approved.kind, 'landed');
    assert.equal(git('show', 'HEAD:kept.txt'), 'final');
    assert.equal((await readTask(keep)).status, 'done');

    const prompts = api.setPrompts({ confirm: async () => true });
    try {
      assert.equal(((await vscode.commands.executeCommand('ralph.rejectTask', drop)) as { status: string }).status, 'cancelled');
    } finally {
      prompts.dispose();
    }
    assert.equal(git('branch', '--list', `ralph/${drop}`), '');
    await waitFor('nothing left to review', () => !/to review/.test(api.statusBar!.text));
  });

  it("a merge that waits on the person's file: the tree shows the file, the panel the ways on; Keep on Its Branch holds it for review", async () => {
    const writer: Step = (request: RecordedRequest) =>
      request.body?.messages?.at(-1)?.role === 'tool'
        ? (complete as Exclude<Step, (r: RecordedRequest) => unknown>)
        : { toolCalls: [{ name: 'write_file', arguments: { path: 'local-notes.txt', content: 'from the agent\n' } }] };
    await start(
      Array.from({ length: 6 }, () => writer),
      { loop: { maxIterations: 3, maxParallel: 2 }, merge: { waitForUserMinutes: 10 } },
    );
    const id = await addTask('Write the notes', 'Write local-notes.txt');
    await fs.writeFile(path.join(workspace(), 'local-notes.txt'), 'my own notes\n');
    const run = autopilot();
    try {
      await waitFor('the merge waiting on local-notes.txt', () =>
        api.runs!.status.queue?.find((q) => q.taskId === id && q.state === 'waiting'),
      );
      const node = await waitFor('the waiting task in the tree', () => taskNodes(api).find((n) => n.task.id === id));
      const item = api.tree!.getTreeItem(node);
      assert.equal(item.contextValue, 'task.in_progress.waiting');
      assert.equal(item.description, 'merge waits on your changes to local-notes.txt');
      const children = api.tree!.getChildren(node);
      assert.equal(children.length, 1);
      assert.match(String(api.tree!.getTreeItem(children[0]).resourceUri?.path), /local-notes\.txt$/);
      await waitFor('the ways on in the panel', () =>
        api.panelModel!.state.queue.find((q) => q.taskId === id && q.state === 'waiting')?.files?.includes('local-notes.txt'),
      );
      assert.deepEqual(await vscode.commands.executeCommand('ralph.openWaitingFiles', id), ['local-notes.txt']);
      assert.equal(await vscode.commands.executeCommand('ralph.retryMerge'), true);
      assert.equal(await vscode.commands.executeCommand('ralph.keepOnBranch', id), true);
    } finally {
      await fs.writeFile(path.join(workspace(), 'local-notes.txt'), 'my own notes\n');
    }
    assert.deepEqual(
      (await run)?.results.map((r) => [r.taskId, r.status]),
      [[id, 'review']],
      'the run ended with the task waiting for the person',
    );
    assert.equal(await fs.readFile(path.join(workspace(), 'local-notes.txt'), 'utf8'), 'my own notes\n', 'never overwritten');
    assert.match((await readTask(id)).blockedReason ?? '', /kept on its branch at your request/);
    // once the file is out of the way, the approval lands it
    await fs.rm(path.join(workspace(), 'local-notes.txt'));
    assert.equal(((await vscode.commands.executeCommand('ralph.approveTask', id)) as { kind: string }).kind, 'landed');
    assert.equal(await fs.readFile(path.join(workspace(), 'local-notes.txt'), 'utf8'), 'from the agent\n');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("Request Changes sends the comments on the diff's lines with the feedback", async () => {
    const writer: Step = (request: RecordedRequest) =>
      request.body?.messages?.at(-1)?.role === 'tool'
        ? (complete as Exclude<Step, (r: RecordedRequest) => unknown>)
        : { toolCalls: [{ name: 'write_file', arguments: { path: 'commented.txt', content: 'one\ntwo\nthree\n' } }] };
    await start(
      Array.from({ length: 6 }, () => writer),
      { loop: { maxIterations: 3, maxParallel: 2 }, merge: { review: 'manual' } },
    );
    const id = await addTask('Write commented', 'Write commented.txt');
    assert.deepEqual(
      (await autopilot())?.results.map((r) => r.status),
      ['review'],
    );
    const shown = (await vscode.commands.executeCommand('ralph.showChanges', id)) as { head: string };
    const uri = vscode.Uri.from({
      scheme: 'ralph-git',
      path: '/commented.txt',
      query: JSON.stringify({ root: workspace(), ref: shown.head, taskId: id }),
    });
    const document = await vscode.workspace.openTextDocument(uri);
    assert.equal(document.getText(), 'one\ntwo\nthree\n', 'the ralph-git: side reads the held result');
    const thread = api.comments!.thread(uri, 1);
    await vscode.commands.executeCommand('ralph.addReviewComment', { thread, text: 'say 2 instead' });
    const sent = (await vscode.commands.executeCommand('ralph.requestChanges', id, 'see the comment')) as {
      questions: { answer: string }[];
    };
    assert.equal(sent.questions.at(-1)?.answer, 'see the comment\nOn the diff:\n- commented.txt:2: say 2 instead');
    assert.deepEqual(api.comments!.of(id), [], 'sent and cleared');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Convene Bug Council on a task: the plan is handed to its next iteration', async () => {
    await start([
      { content: '<ralph>BLOCKED:the tests keep failing</ralph>' },
      { content: 'Root cause: the fixture is stale.' },
      { content: '1. rebuild the fixture\n2. run the tests' },
    ]);
    const id = await addTask('Stuck one', 'Fix the tests');
    assert.deepEqual(
      (await autopilot())?.results.map((r) => r.status),
      ['blocked'],
    );
    const prompts = api.setPrompts({ input: async () => 'look at the fixture' });
    let plan: string;
    try {
      plan = (await vscode.commands.executeCommand('ralph.conveneCouncil', id)) as string;
    } finally {
      prompts.dispose();
    }
    assert.match(plan, /rebuild the fixture/);
    assert.match(text(chats(server!)[1]), /asked for by the person: look at the fixture/);
    const checkpoint = JSON.parse(await fs.readFile(path.join(workspace(), '.ralph', 'state', `${id}.json`), 'utf8'));
    assert.match(checkpoint.history.at(-1).feedback[0], /^Bug council plan .*convened by the person/);
  });

  it('Edit Task sets type, complexity, priority, dependencies, max iterations, the check command and the review mode through its settings menu', async () => {
    await start([]);
    const base = await addTask('Base', 'p');
    const id = await addTask('Edited', 'p');
    const picks = ['type', 'bugfix', 'complexity', 'priority', 'dependsOn', 'maxIterations', 'check', 'review', 'manual', 'done'];
    const inputs = ['Edited', 'p', 'it is written', '9', '2', base, '12', 'npm test -- edited'];
    const prompts = api.setPrompts({ choose: async () => picks.shift() as never, input: async () => inputs.shift() });
    try {
      await vscode.commands.executeCommand('ralph.editTask', id);
    } finally {
      prompts.dispose();
    }
    const task = await readTask(id);
    assert.deepEqual(
      [task.type, task.complexity, task.priority, task.dependsOn, task.maxIterations, task.check, task.review],
      ['bugfix', 9, 2, [base], 12, 'npm test -- edited', 'manual'],
    );
  });
});

async function readTask(id: string): Promise<{
  status: string;
  blockedReason?: string;
  type?: string;
  complexity?: number;
  priority?: number;
  dependsOn?: string[];
  maxIterations?: number;
  check?: string;
  review?: string;
}> {
  const file = JSON.parse(await fs.readFile(path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.ralph', 'tasks.json'), 'utf8'));
  return file.tasks.find((t: { id: string }) => t.id === id);
}

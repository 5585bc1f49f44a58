/**
 * `@ralph` and its language-model tools in the real extension host. The chat is code-server's
 * own (VS Code 1.139) without Copilot: `workbench.action.chat.open` with a query sends the
 * request through the chat widget to the participant, with the scripted chat model of the test
 * extension (test/fixtures/lm-provider-extension) as the request's model. The tools go through
 * `vscode.lm.invokeTool`. The runner turns AI features off for the other suites; this one turns
 * them on for itself.
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ChatExchange } from '../../src/chat/chatRecorder';
import type { RalphExtensionApi } from '../../src/extension';
import type { Task } from '../../src/core/tasks/schema';
import { planReply, PRD, SHOP_PLAN } from '../fixtures/intake/planDocs';
import { type ScriptedServer, startScriptedServer } from '../fixtures/scriptedServer';
import { waitFor } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const FIXTURE_ID = 'ralph-test.ralph-lm-fixture';
const KEY_ENV = 'RALPH_INTEGRATION_KEY';

interface FixtureApi {
  script(steps: { text?: string[]; toolCalls?: { callId: string; name: string; input: object }[] }[]): void;
  reset(): void;
  requests: { model: string; messages: { role: string; content: { type: string; value?: string }[] }[] }[];
}

describe('@ralph in the chat, and its language-model tools', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const tasksFile = () => path.join(workspace(), '.ralph', 'tasks.json');
  let api: RalphExtensionApi;
  let fixture: FixtureApi;
  let server: ScriptedServer | undefined;
  let originalConfig: string;
  const disposables: vscode.Disposable[] = [];

  const storeTasks = async (): Promise<Task[]> => (JSON.parse(await fs.readFile(tasksFile(), 'utf8')) as { tasks: Task[] }).tasks;
  const now = new Date().toISOString();
  const task = (id: string, extra: Partial<Task> = {}): Task => ({
    id,
    title: `Task ${id}`,
    prompt: 'p',
    promise: 'q',
    status: 'todo',
    priority: 100,
    dependsOn: [],
    type: 'feature',
    complexity: 3,
    iterations: 0,
    createdAt: now,
    updatedAt: now,
    ...extra,
  });

  /**
   * Sends `query` through the chat view and waits for @ralph's whole answer to it: the exchange of
   * its command and prompt (a warm-up's answer that came late is not taken for it).
   */
  async function ask(query: string): Promise<ChatExchange> {
    const before = api.chat.history.length;
    const [, command, prompt = ''] = /^@ralph(?:\s+\/(\w+))?\s*(.*)$/s.exec(query) ?? [];
    await vscode.commands.executeCommand('workbench.action.chat.open', { query, isPartialQuery: false });
    return waitFor(`@ralph to answer "${query}"`, () =>
      api.chat.history
        .slice(before)
        .find((e) => e.done && (e.command ?? undefined) === command && e.prompt.trim().toLowerCase() === prompt.trim().toLowerCase()),
    );
  }

  before(async function () {
    this.timeout(240_000);
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    fixture = await vscode.extensions.getExtension<FixtureApi>(FIXTURE_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    originalConfig = await fs.readFile(path.join(workspace(), '.ralph', 'config.json'), 'utf8');
    await vscode.workspace.getConfiguration('chat').update('disableAIFeatures', false, vscode.ConfigurationTarget.Global);
    // the chat comes up after the setting changed: a harmless `@ralph /review` until it answers
    // code-server's chat without Copilot opens with no model chosen (its picker offers only a
    // Copilot sign-in) and fails the first request, which then makes it list the editor's other
    // models and pick one; a second request sent while the first is pending is refused ("You
    // already have pending requests"). So a harmless `@ralph /review`, and another once the first
    // has had time to fail, before the tests.
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const before = api.chat.history.length;
      await vscode.commands.executeCommand('workbench.action.chat.open', { query: '@ralph /review', isPartialQuery: false });
      // answered: the whole answer, not its start (a request still pending would refuse the tests' first)
      const answered = await waitFor(
        'the first answer',
        () => (api.chat.history.length > before && api.chat.history.at(-1)?.done) || undefined,
        30_000,
      ).catch(() => undefined);
      console.log(`      chat warm-up: attempt ${attempt} ${answered ? 'answered' : 'unanswered'} after ${Date.now() - started} ms`);
      if (answered || attempt === 2) break;
    }
  });
  after(async () => {
    await vscode.workspace.getConfiguration('chat').update('disableAIFeatures', true, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), originalConfig);
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
  });
  beforeEach(() => fixture.reset());
  afterEach(async () => {
    for (const d of disposables.splice(0)) d.dispose();
    await server?.close();
    server = undefined;
  });

  it('/status tells where the tasks stand and who waits for whom; /review and /run start nothing', async () => {
    await fs.writeFile(
      tasksFile(),
      JSON.stringify(
        {
          version: 1,
          tasks: [
            task('T-001', { title: 'Sign-in form' }),
            task('T-002', { title: 'Lockout', dependsOn: ['T-001'] }),
            task('T-003', { title: 'Pick a database', status: 'needs_help', blockedReason: 'Postgres or SQLite?' }),
          ],
        },
        null,
        2,
      ),
    );
    const status = await ask('@ralph /status');
    assert.equal(status.command, 'status');
    assert.match(status.markdown, /\*\*Ralph Loop\*\* — 3 tasks: 2 to do, 1 needs help\./);
    assert.match(status.markdown, /No run is active\. Ready to run: \*\*T-001\*\*/);
    assert.match(status.markdown, /- \*\*T-003\*\* asks: Postgres or SQLite\? — answer with `@ralph \/answer T-003 …`/);
    assert.match(status.markdown, /\| T-002 \| to do \| 0 \| Lockout \|/);
    assert.deepEqual(
      status.buttons.map((b) => b.command),
      ['ralph.openPanel', 'ralph.startAutopilot'],
    );
    assert.ok(status.model?.startsWith('scripted'), `the request came with the scripted chat model (${status.model})`);

    const run = await ask('@ralph /run');
    assert.match(run.markdown, /Start the autopilot\? It runs the 1 ready task \(\*\*T-001\*\* Sign-in form\)/);
    assert.deepEqual(run.buttons, [{ title: 'Start Autopilot', command: 'ralph.startAutopilot' }]);
    const one = await ask('@ralph /run t-002');
    assert.match(one.markdown, /\*\*T-002\*\* waits for T-001 to be done first/);
    const first = await ask('@ralph /run T-001');
    assert.deepEqual(first.buttons, [{ title: 'Run T-001', command: 'ralph.runSelectedTask', arguments: ['T-001'] }]);
    assert.equal(api.runs!.running, false, 'asking is not starting: nothing runs until the button is clicked');
    assert.deepEqual(
      (await storeTasks()).map((t) => t.status),
      ['todo', 'todo', 'needs_help'],
    );

    const review = await ask('@ralph /review');
    assert.match(review.markdown, /No task awaits your review/);
  });

  it("/answer answers the task's question: the answer joins its history, pinned in its next context, and the task is ready again", async () => {
    const asked = { id: 'q1', kind: 'help' as const, question: 'Postgres or SQLite?', askedAt: new Date().toISOString() };
    await fs.writeFile(
      tasksFile(),
      JSON.stringify(
        {
          version: 1,
          tasks: [
            task('T-003', {
              title: 'Pick a database',
              status: 'needs_help',
              blockedReason: 'Postgres or SQLite?',
              iterations: 2,
              questions: [asked],
            }),
          ],
        },
        null,
        2,
      ),
    );
    const list = await ask('@ralph /answer');
    assert.match(list.markdown, /A task is waiting for an answer:\n\n- \*\*T-003\*\* Pick a database asks: Postgres or SQLite\?/);
    const answered = await ask('@ralph /answer T-003 SQLite, in data/app.db');
    assert.match(answered.markdown, /Answered \*\*T-003\*\*: your answer is pinned in its next iteration's context/);
    assert.deepEqual(
      answered.buttons.map((b) => b.title),
      ['Run T-003'],
    );
    const [stored] = await storeTasks();
    assert.equal(stored.status, 'todo');
    assert.equal(stored.iterations, 2, 'its iterations are kept');
    assert.equal(stored.questions?.at(-1)?.answer, 'SQLite, in data/app.db');
  });

  it("/add drafts a task with the chat's own model, never guesses a promise, and adds it only from its button", async () => {
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    fixture.script([
      {
        text: [
          '```json\n',
          JSON.stringify({
            title: 'Cart survives a reload',
            prompt: 'Keep the cart in localStorage so a reload keeps its items.',
            promise: null,
            check: null,
            type: 'feature',
          }),
          '\n```',
        ],
      },
    ]);
    const added = await ask('@ralph /add keep the cart when the page reloads');
    assert.match(added.markdown, /\*\*Cart survives a reload\*\* · feature/);
    assert.match(added.markdown, /the conversation states no completion criteria — you will be asked for them when you add it/);
    assert.match(added.markdown, /Nothing is added until you click \*\*Add Task\*\*/);
    const sent = fixture.requests
      .at(-1)!
      .messages.map((m) => m.content.map((p) => p.value ?? '').join(''))
      .join('\n');
    assert.match(sent, /Never invent completion criteria/);
    assert.match(sent, /Request:\nkeep the cart when the page reloads/);
    assert.deepEqual(await storeTasks(), [], 'drafting adds nothing');

    // the person clicks Add Task: asked for the promise, then it is added
    const button = added.buttons.find((b) => b.title === 'Add Task')!;
    disposables.push(api.setPrompts({ input: async () => 'reloading the page keeps every item in the cart' }));
    await vscode.commands.executeCommand(button.command, ...(button.arguments ?? []));
    const [saved] = await storeTasks();
    assert.equal(saved.title, 'Cart survives a reload');
    assert.equal(saved.promise, 'reloading the page keeps every item in the cart');

    // a model that answers nonsense: the request as typed becomes the draft, and says so
    fixture.script([{ text: ['I would love to help!'] }]);
    const fallback = await ask('@ralph /add rename the config loader');
    assert.match(fallback.markdown, /reply held no task, so the request is the task as you typed it/);
    assert.match(fallback.markdown, /\*\*rename the config loader\*\*/);
  });

  it('/plan plans the open document with the configured model and opens the review; nothing is saved', async () => {
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    server = await startScriptedServer({ steps: [planReply(SHOP_PLAN)] });
    process.env[KEY_ENV] = 'sk-integration-chat';
    await fs.writeFile(
      path.join(workspace(), '.ralph', 'config.json'),
      JSON.stringify({ llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 } }, null, 2),
    );
    await fs.mkdir(path.join(workspace(), 'docs'), { recursive: true });
    const prd = path.join(workspace(), 'docs', 'shop.md');
    await fs.writeFile(prd, PRD);
    await vscode.window.showTextDocument(vscode.Uri.file(prd));
    const planned = await ask('@ralph /plan');
    assert.match(planned.markdown, /Proposed 3 tasks from docs\/shop\.md:\n\n1\. \*\*Sign-in form\*\* \(feature, complexity 4\)/);
    assert.match(planned.markdown, /\*\*Nothing is saved yet\*\*/);
    assert.equal(api.planReviews!.current!.state.document, 'docs/shop.md');
    assert.deepEqual(await storeTasks(), []);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('ralph_status, ralph_addTask and ralph_runTask: the same core actions for agent mode; bad input is an error the model reads', async () => {
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    const names = vscode.lm.tools
      .filter((t) => t.name.startsWith('ralph_'))
      .map((t) => t.name)
      .sort();
    assert.deepEqual(names, ['ralph_addTask', 'ralph_runTask', 'ralph_status']);
    const text = (result: vscode.LanguageModelToolResult) =>
      result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');

    const added = await vscode.lm.invokeTool('ralph_addTask', {
      input: { title: 'Write hello', prompt: 'Create hello.txt containing hi', promise: 'hello.txt contains hi' },
      toolInvocationToken: undefined,
    });
    assert.match(text(added), /^Added T-001 "Write hello" \(to do\)/);
    await assert.rejects(
      Promise.resolve(
        vscode.lm.invokeTool('ralph_addTask', { input: { title: 'No promise', prompt: 'x' }, toolInvocationToken: undefined }),
      ),
      /promise/,
    );
    assert.equal((await storeTasks()).length, 1);
    assert.match(
      text(await vscode.lm.invokeTool('ralph_status', { input: {}, toolInvocationToken: undefined })),
      /Ready to run: \*\*T-001\*\*/,
    );

    server = await startScriptedServer({
      steps: [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } }] },
        { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote it', promiseEvidence: 'hello.txt has hi' } }] },
      ],
    });
    process.env[KEY_ENV] = 'sk-integration-chat';
    await fs.writeFile(
      path.join(workspace(), '.ralph', 'config.json'),
      JSON.stringify(
        {
          llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 },
          loop: { maxIterations: 3, maxParallel: 1 },
        },
        null,
        2,
      ),
    );
    await assert.rejects(
      Promise.resolve(vscode.lm.invokeTool('ralph_runTask', { input: { taskId: 'T-404' }, toolInvocationToken: undefined })),
      /there is no task T-404/,
    );
    const started = await vscode.lm.invokeTool('ralph_runTask', { input: { taskId: 'T-001' }, toolInvocationToken: undefined });
    assert.match(text(started), /Ralph is working on T-001 in the background/);
    await waitFor('the run to finish', async () => !api.runs!.running && (await storeTasks())[0].status === 'done', 60_000);
    assert.equal(await fs.readFile(path.join(workspace(), 'hello.txt'), 'utf8'), 'hi\n');
  });
});

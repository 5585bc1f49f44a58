/**
 * Unattended runs never wait for a person (issue 49): `ralph run` with nobody to ask — no
 * terminal, `CI`, a GitHub Actions job, `--unattended` — whose landing meets the person's own
 * untracked file ends that landing at once (checked, waiting to land, the file untouched), ends
 * with the file named and the command that lands it, and the next run lands it without the agent.
 * On a terminal (attended) the merge waits for the person as before. Real git, the CLI as a child
 * process, the scripted model server.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { nobodyToAsk } from '../../../src/cli/terminal';
import { startScriptedServer, type RecordedRequest, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { CLI_ENV, runCli, runCliInProcess, runOnTerminal } from '../helpers/cliHarness';
import { chatRequests, requestText, TEST_KEY_ENV } from '../helpers/loopHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** `WRITE <file> <<content>>` in the prompt: the agent writes it, then completes. */
const writer: Step = (request: RecordedRequest) => {
  const messages = request.body?.messages ?? [];
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(requestText({ body: { messages: messages.filter((m) => m.role === 'user') } }));
  if (!match) throw new Error('no instruction');
  if (messages.at(-1)?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${match[1]}`, promiseEvidence: 'written' } }] };
  return { toolCalls: [{ name: 'write_file', arguments: { path: match[1], content: match[2] } }] };
};

/** The person's own file, never committed: bytes a text round trip would change. */
const MINE = Buffer.from([0x6d, 0x69, 0x6e, 0x65, 0x0d, 0x0a, 0x00, 0xff, 0xfe]);

/** The environment of a person at their machine: no CI variables. */
const { CI: _ci, GITHUB_ACTIONS: _gha, ...ATTENDED_ENV } = CLI_ENV;

describe('unattended runs never wait for a person (ralph run, issue 49)', function () {
  this.timeout(180_000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
  });

  async function setUp(merge: Record<string, unknown> = {}): Promise<void> {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer({ steps: Array.from({ length: 8 }, () => writer) });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
      loop: { maxParallel: 2, maxIterations: 4 },
      merge,
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'ralph init');
    const added = await runCliInProcess(
      ['task', 'add', 'Write notes', '--prompt', 'WRITE notes.txt <<from the agent>>', '--promise', 'notes.txt'],
      ws.dir,
    );
    assert.equal(added.code, 0, added.stderr);
    await fs.writeFile(ws.path('notes.txt'), MINE);
  }

  it('knows when nobody is there: CI, a GitHub Actions job; not CI=false', () => {
    assert.equal(nobodyToAsk({ CI: 'true' }), 'CI');
    assert.equal(nobodyToAsk({ CI: '1' }), 'CI');
    assert.equal(nobodyToAsk({ GITHUB_ACTIONS: 'true' }), 'a GitHub Actions job');
    assert.equal(nobodyToAsk({ CI: 'false' }), undefined);
    assert.equal(nobodyToAsk({ CI: '0' }), undefined);
    assert.equal(nobodyToAsk({}), undefined);
  });

  it("no terminal: the landing meets the person's untracked file, the run ends at once (exit 3, the file and the command named), the file byte-identical; ralph run after the file is moved lands it without the agent", async () => {
    // the default merge.waitForUserMinutes is 30: the run below ends long before
    await setUp();
    const main = ws.git('rev-parse', 'main');
    const started = Date.now();
    const run = await runCli(['run'], ws.dir, ATTENDED_ENV);
    assert.ok(Date.now() - started < 60_000, 'ended within a minute');
    assert.equal(run.code, 3, run.stdout + run.stderr);
    assert.match(run.stdout, /run summary: 0 done · 1 checked, waiting to land\n/);
    assert.match(
      run.stdout,
      /T-001 waits to land: your uncommitted changes to notes\.txt are in the way[^\n]*\n {4}→ ralph run --task T-001/,
    );
    assert.deepEqual(await fs.readFile(ws.path('notes.txt')), MINE, 'the file is byte-identical');
    assert.equal(ws.git('rev-parse', 'main'), main, 'nothing landed');
    const task = JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0];
    assert.equal(task.status, 'in_progress', 'not failed: checked and waiting to land');

    const status = await runCli(['status'], ws.dir);
    assert.match(
      status.stdout,
      /needs you: 1 waiting to land\n {2}T-001 waits to land: [^\n]*notes\.txt[^\n]*\n {4}→ ralph run --task T-001/,
    );
    const json = JSON.parse((await runCli(['status', '--json'], ws.dir)).stdout);
    assert.deepEqual(
      json.landing.map((l: { taskId: string; command: string }) => [l.taskId, l.command]),
      [['T-001', 'ralph run --task T-001']],
    );

    const asked = chatRequests(server).length;
    await fs.rm(ws.path('notes.txt')); // moved away by the person
    const landed = await runCli(['run'], ws.dir, ATTENDED_ENV);
    assert.equal(landed.code, 0, landed.stdout + landed.stderr);
    assert.equal(chatRequests(server).length, asked, 'the agent did not run again');
    assert.equal(await ws.read('notes.txt'), 'from the agent');
    assert.equal(JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0].status, 'done');
  });

  it('on a terminal: CI (or --unattended) makes the run unattended; without them the merge waits for the person (merge.waitForUserMinutes), as before', async () => {
    await setUp({ waitForUserMinutes: 0.02 });
    const ci = await runOnTerminal(['run', '--task', 'T-001'], ws.dir, '', { ...ATTENDED_ENV, CI: 'true' });
    assert.equal(ci.code, 3, ci.stdout);
    assert.match(ci.stdout, /T-001 waits to land: [^\n]*notes\.txt/);
    assert.deepEqual(await fs.readFile(ws.path('notes.txt')), MINE);
    const flag = await runOnTerminal(['run', '--task', 'T-001', '--unattended'], ws.dir, '', ATTENDED_ENV);
    assert.equal(flag.code, 3, flag.stdout);
    assert.match(flag.stdout, /T-001 waits to land: [^\n]*notes\.txt/);
    assert.doesNotMatch(flag.stdout, /merge of T-001 waits/, 'no wait');
    // attended: the same landing waits for the person, then holds the checked result for them
    const attended = await runOnTerminal(['run', '--task', 'T-001'], ws.dir, '', ATTENDED_ENV);
    assert.equal(attended.code, 3, attended.stdout);
    assert.match(attended.stdout, /merge of T-001 waits: uncommitted changes/);
    assert.match(attended.stdout, /T-001 waits for review: waited 0\.02 min \(merge\.waitForUserMinutes\)/);
    assert.deepEqual(await fs.readFile(ws.path('notes.txt')), MINE);
  });
});

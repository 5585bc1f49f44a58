import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseCli } from '../../../src/cli/args';
import { type CliIo, cliApproval } from '../../../src/cli/main';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const request = {
  kind: 'action' as const,
  title: 'Ralph (caio) wants to push HEAD to origin',
  detail: 'Command: git push\nRALPH_REMOTE=origin',
};
const gated = {
  kind: 'command' as const,
  title: 'Run this command the agent wants to run? (discarding work in the repository)',
  detail: 'git reset --hard',
};

function fakeIo(confirm?: (question: string) => Promise<boolean>): CliIo & { errors: string[] } {
  const errors: string[] = [];
  return { errors, out() {}, err: (line) => errors.push(line), cwd: '/', onInterrupt: () => () => {}, confirm };
}

describe('the CLI asks for approval of caio actions and of gated commands, apart', function () {
  this.timeout(60000);

  it('parses --yes (and -y), --approve-commands and --force on run only', () => {
    assert.deepEqual(parseCli(['run', '--yes'], '/w'), {
      kind: 'run',
      workspace: '/w',
      taskId: undefined,
      json: false,
      yes: true,
      approveCommands: false,
      force: false,
    });
    assert.equal((parseCli(['run', '--approve-commands'], '/w') as { approveCommands: boolean }).approveCommands, true);
    assert.throws(() => parseCli(['status', '--approve-commands'], '/w'), /--approve-commands does not apply/);
    assert.equal((parseCli(['run', '--force'], '/w') as { force: boolean }).force, true);
    assert.equal((parseCli(['run', '-y', '--json'], '/w') as { yes: boolean }).yes, true);
    assert.equal((parseCli(['run'], '/w') as { yes: boolean }).yes, false);
    assert.throws(() => parseCli(['status', '--yes'], '/w'), /--yes does not apply/);
  });

  it('--yes approves, a terminal asks y/N with the detail, no terminal refuses and says how to approve', async () => {
    const none = { actions: false, commands: false };
    const yes = fakeIo();
    assert.equal(await cliApproval({ actions: true, commands: false }, yes).approve(request), true);
    assert.match(yes.errors[0], /approved \(--yes\): Ralph \(caio\) wants to push/);

    const questions: string[] = [];
    const terminal = fakeIo(async (question) => (questions.push(question), false));
    assert.equal(await cliApproval(none, terminal).approve(request), false);
    assert.equal(questions[0], 'Ralph (caio) wants to push HEAD to origin\n  Command: git push\n  RALPH_REMOTE=origin\nApprove? [y/N] ');

    const noTerminal = fakeIo();
    assert.equal(await cliApproval(none, noTerminal).approve(request), false);
    assert.match(noTerminal.errors[0], /not approved: .*stdin is not a terminal; run with --yes/);
  });

  it("--yes does not approve the agent's gated commands; --approve-commands does, and not caio's actions", async () => {
    const yesOnly = fakeIo();
    assert.equal(await cliApproval({ actions: true, commands: false }, yesOnly).approve(gated), false);
    assert.match(yesOnly.errors[0], /not approved: Run this command .* run with --approve-commands/);

    const commandsOnly = fakeIo();
    assert.equal(await cliApproval({ actions: false, commands: true }, commandsOnly).approve(gated), true);
    assert.match(commandsOnly.errors[0], /approved \(--approve-commands\): .*\n  git reset --hard/);
    assert.equal(await cliApproval({ actions: false, commands: true }, fakeIo()).approve(request), false);

    const questions: string[] = [];
    const terminal = fakeIo(async (question) => (questions.push(question), true));
    assert.equal(await cliApproval({ actions: true, commands: false }, terminal).approve(gated), true, 'a terminal is asked');
    assert.match(questions[0], /^Run this command .*\n  git reset --hard\nApprove\? \[y\/N\] $/);
  });

  describe('ralph run against the scripted server', () => {
    let ws: TempWorkspace;
    let server: ScriptedServer;
    const steps = (): Step[] => [
      { toolCalls: [{ name: 'delegate', arguments: { target: 'caio', objective: 'Tell the team' } }] },
      { toolCalls: [{ name: 'notify', arguments: { message: 'done' } }] },
      { content: 'ok' },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ];
    beforeEach(async () => {
      ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
      server = await startScriptedServer({ steps: steps() });
      assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
      const config = {
        llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
        agents: { caio: { commands: { notify: 'touch notified.marker' } } },
      };
      await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
      assert.equal(
        (await runCliInProcess(['task', 'add', 'Notify', '--prompt', 'Notify the team', '--promise', 'notified'], ws.dir)).code,
        0,
      );
    });
    afterEach(async () => {
      await server.close();
      await ws.cleanup();
    });

    it('with stdin not a terminal, refuses: the command never runs and the event stream shows PENDING', async () => {
      const result = await runCli(['run', '--json'], ws.dir);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(ws.exists('notified.marker'), false);
      assert.match(result.stderr, /not approved: Ralph \(caio\) wants to send the notification "done"/);
      const events = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; envelope?: string });
      const delegation = events.find((e) => e.type === 'delegation.result');
      assert.match(delegation?.envelope ?? '', /\[PENDING\] notify/);
    });

    it('with --yes, the approved command runs', async () => {
      const result = await runCli(['run', '--yes'], ws.dir);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(ws.exists('notified.marker'), true);
      assert.match(result.stdout, /⇠ caio: SUCCESS — 1 OK/);
    });
  });

  describe('gated commands of the agent through ralph run', () => {
    let ws: TempWorkspace;
    let server: ScriptedServer;
    beforeEach(async () => {
      ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
      server = await startScriptedServer({
        steps: [
          { toolCalls: [{ name: 'run_command', arguments: { command: 'git reset --hard && echo ran > reset.marker' } }] },
          { content: 'Waiting on the reset. <ralph>PROGRESS:10</ralph>' },
          { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
        ],
      });
      assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
      const config = {
        llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
        loop: { maxParallel: 1 },
        commands: { sandbox: 'off' },
      };
      await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
      assert.equal((await runCliInProcess(['task', 'add', 'Reset', '--prompt', 'Reset the tree', '--promise', 'reset'], ws.dir)).code, 0);
    });
    afterEach(async () => {
      await server.close();
      await ws.cleanup();
    });

    it("--yes alone does not run `git reset --hard`: without a terminal it becomes the task's question, and how to answer it is named", async () => {
      const result = await runCli(['run', '--yes'], ws.dir);
      assert.equal(ws.exists('reset.marker'), false, 'the gated command never ran');
      assert.equal(result.code, 3, 'the task needs the person');
      assert.match(
        result.stdout,
        /needs a person's approval \((git reset: )?discarding work in the repository\); nobody can answer now, so it is the task's question/,
      );
      const toolMessage = String(server.requests.filter((r) => r.path.endsWith('/chat/completions'))[1]?.body?.messages?.at(-1)?.content);
      assert.match(toolMessage, /needs a person's approval .* it did not run\. It is recorded as your task's question/);
      assert.match(
        result.stdout,
        /T-001 asks: May the agent run `git reset --hard && echo ran > reset\.marker`\?[\s\S]*ralph task answer T-001 --approve/,
      );
      const task = JSON.parse(await fs.readFile(ws.path('.ralph/tasks.json'), 'utf8')).tasks[0];
      assert.equal(task.status, 'needs_help');
      assert.equal(task.questions[0].kind, 'command');
      assert.equal(task.questions[0].command, 'git reset --hard && echo ran > reset.marker');
    });

    it('--approve-commands runs it', async () => {
      const result = await runCli(['run', '--approve-commands'], ws.dir);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(ws.exists('reset.marker'), true);
      assert.match(result.stderr, /approved \(--approve-commands\)/);
    });
  });
});

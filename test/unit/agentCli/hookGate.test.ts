import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  HOOK_CONTEXT_ENV,
  type HookContext,
  judgeToolUse,
  preCompactHook,
  preToolUseHook,
  readHookQuestions,
} from '../../../src/core/agentCli/hookGate';
import { RalphConfigSchema } from '../../../src/core/config/schema';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** Ralph's rules on an agent CLI's tool calls (Claude Code's PreToolUse hook), as on the built-in agent's. */
describe("the agent CLI's tool-use hook: Ralph's command rules", () => {
  let ws: TempWorkspace;
  let context: HookContext;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'a.js': 'x\n' } });
    const config = RalphConfigSchema.parse({});
    context = {
      root: ws.dir,
      since: Date.now(),
      config: { commands: config.commands, loop: config.loop },
      questionsFile: path.join(await ws.outsideDir(), 'questions.ndjson'),
      progressFile: '.ralph/progress/T-001.md',
    };
  });
  afterEach(() => ws.cleanup());

  const bash = (command: string) => ({ tool_name: 'Bash', tool_input: { command }, cwd: ws.dir });

  it('lets an ordinary command through: npm test, git status', async () => {
    assert.deepEqual(await judgeToolUse(bash('npm test'), context), { action: 'allow' });
    assert.deepEqual(await judgeToolUse(bash('git status && git diff'), context), { action: 'allow' });
  });

  it('refuses what the built-in policy refuses: a delete outside the task folder', async () => {
    const verdict = await judgeToolUse(bash('rm -rf /etc/ssh'), context);
    assert.equal(verdict.action, 'deny');
    assert.match((verdict as { reason: string }).reason, /^Ralph refused this command \(refused by the built-in policy/);
    assert.deepEqual(await readHookQuestions(context.questionsFile), []);
  });

  it("keeps a command that needs a person's approval as the task's question (nobody answers inside a session)", async () => {
    const verdict = await judgeToolUse(bash('git push --force origin main'), context);
    assert.equal(verdict.action, 'deny');
    assert.match((verdict as { reason: string }).reason, /needs a person's approval .* recorded as your task's question/);
    const questions = await readHookQuestions(context.questionsFile);
    assert.equal(questions.length, 1);
    assert.equal(questions[0].command, 'git push --force origin main');
  });

  it('judges inline code as unknown code: node -e is asked', async () => {
    const verdict = await judgeToolUse(bash(`node -e "require('fs').rmSync('/tmp/x', {recursive: true})"`), context);
    assert.equal(verdict.action, 'deny');
    assert.equal((await readHookQuestions(context.questionsFile)).length, 1);
    // in Ralph's sandbox (cliSandbox.ts) it runs, as the built-in agent's does: its writes cannot leave the task's folder
    const confined = await judgeToolUse(bash(`node -e "require('fs').writeFileSync(process.argv[1], 'x')" out.txt`), {
      ...context,
      confined: true,
    });
    assert.equal(confined.action, 'allow');
    assert.equal((await readHookQuestions(context.questionsFile)).length, 1, 'nothing more kept for a person');
    // what is refused stays refused inside the sandbox too
    assert.equal((await judgeToolUse(bash('git push --force origin main'), { ...context, confined: true })).action, 'deny');
  });

  it("refuses a file tool's write under .ralph/ but the task's own notes; writes elsewhere in the folder pass", async () => {
    const write = (file: string) => ({ tool_name: 'Write', tool_input: { file_path: file, content: 'x' }, cwd: ws.dir });
    const store = await judgeToolUse(write(path.join(ws.dir, '.ralph', 'tasks.json')), context);
    assert.equal(store.action, 'deny');
    assert.match((store as { reason: string }).reason, /belongs to the orchestrator/);
    assert.equal(
      (await judgeToolUse({ tool_name: 'Edit', tool_input: { file_path: '.ralph/config.json' }, cwd: ws.dir }, context)).action,
      'deny',
    );
    assert.deepEqual(await judgeToolUse(write(path.join(ws.dir, '.ralph', 'progress', 'T-001.md')), context), { action: 'allow' });
    assert.deepEqual(await judgeToolUse(write(path.join(ws.dir, 'src', 'a.js')), context), { action: 'allow' });
    await fs.rm(context.questionsFile, { force: true });
  });

  it('once the session must end (its stop file written): the next tool call stops the CLI (continue: false), whatever the call', async () => {
    const dir = await ws.outsideDir();
    const file = path.join(dir, 'context.json');
    const stopFile = path.join(dir, 'stop.json');
    await fs.writeFile(file, JSON.stringify({ ...context, stopFile }));
    const call = JSON.stringify(bash('npm test'));
    assert.deepEqual(await preToolUseHook(call, { [HOOK_CONTEXT_ENV]: file }), { code: 0, stderr: '' });
    await fs.writeFile(stopFile, JSON.stringify({ reason: 'task T-001 token budget reached' }));
    const stopped = await preToolUseHook(call, { [HOOK_CONTEXT_ENV]: file });
    assert.equal(stopped.code, 0);
    assert.deepEqual(JSON.parse(stopped.stdout ?? ''), {
      continue: false,
      stopReason: 'Ralph ended the session: task T-001 token budget reached',
    });
  });

  it("PreCompact: records that the session's context is full (for the session to end there); never blocks", async () => {
    const dir = await ws.outsideDir();
    const file = path.join(dir, 'context.json');
    const eventsFile = path.join(dir, 'events.ndjson');
    await fs.writeFile(file, JSON.stringify({ ...context, eventsFile }));
    assert.deepEqual(await preCompactHook('{"hook_event_name":"PreCompact","trigger":"auto"}', { [HOOK_CONTEXT_ENV]: file }), {
      code: 0,
      stderr: '',
    });
    assert.equal(await fs.readFile(eventsFile, 'utf8'), '{"event":"pre-compact","trigger":"auto"}\n');
    // outside a Ralph session, or with input it cannot read: nothing recorded, the CLI goes on
    assert.deepEqual(await preCompactHook('{}', {}), { code: 0, stderr: '' });
    assert.deepEqual(await preCompactHook('not json', { [HOOK_CONTEXT_ENV]: file }), { code: 0, stderr: '' });
  });
});

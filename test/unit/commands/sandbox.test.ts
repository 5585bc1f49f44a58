import * as assert from 'node:assert/strict';
import { existsSync, promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import { NodeCommandRunner, type CommandRequest } from '../../../src/core/commands/processRunner';
import { IsolatedCommandRunner, type IsolationSettings, probeSandbox, SandboxUnavailableError } from '../../../src/core/commands/sandbox';
import { SecretRedactor } from '../../../src/core/commands/secrets';
import { limitWhen } from '../helpers/processes';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const KEY_ENV = 'RALPH_SANDBOX_TEST_API_KEY';
const KEY = 'sk-sandbox-test-0123456789';
const TOKEN_ENV = 'RALPH_SANDBOX_TEST_TOKEN';
const TOKEN = 'ghp-sandbox-test-token-abcdef';

/** Live host processes whose command line (its arguments joined by spaces) `match`es (sandboxed pids are not host pids). */
function hostProcesses(match: (cmdline: string) => boolean): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (match(cmdline) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function goneEventually(needle: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (hostProcesses((cmdline) => cmdline.includes(needle)).length === 0) return true;
    await new Promise((done) => setTimeout(done, 50));
  }
  return false;
}

/** Whether `sleep <needle>` itself runs (not merely a shell whose command line names it). */
function sleeping(needle: string): boolean {
  return hostProcesses((cmdline) => cmdline.trim() === `sleep ${needle}`).length > 0;
}

function uniqueSleep(): string {
  return `1000.${Math.floor(Math.random() * 1e6)}`;
}

describe('IsolatedCommandRunner', function () {
  if (process.platform !== 'linux') return;
  this.timeout(30_000);
  let ws: TempWorkspace;
  const warnings: string[] = [];
  const inner = new NodeCommandRunner({ killGraceMs: 1000, drainMs: 300 });

  function isolated(
    commands: Partial<IsolationSettings['commands']> = {},
    probe?: () => ReturnType<typeof probeSandbox>,
    base: NodeCommandRunner = inner,
  ): { runner: IsolatedCommandRunner; redactor: SecretRedactor } {
    const redactor = new SecretRedactor();
    const settings: IsolationSettings = {
      root: ws.dir,
      commands: { sandbox: 'auto', network: false, env: [], ...commands },
      keyVariables: [KEY_ENV],
    };
    return { runner: new IsolatedCommandRunner(base, settings, redactor, (m) => warnings.push(m), probe), redactor };
  }
  const run = (runner: IsolatedCommandRunner, command: string, extra: Partial<CommandRequest> = {}) =>
    runner.run({ command, cwd: ws.dir, timeoutMs: 20_000, maxOutputChars: 10_000, ...extra });

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# x\n', '.ralph/config.json': '{}\n' } });
    process.env[KEY_ENV] = KEY;
    process.env[TOKEN_ENV] = TOKEN;
    process.env.RALPH_SANDBOX_TEST_PASSWORD = 'hunter2-long-password';
    warnings.length = 0;
  });
  afterEach(async () => {
    delete process.env[KEY_ENV];
    delete process.env[TOKEN_ENV];
    delete process.env.RALPH_SANDBOX_TEST_PASSWORD;
    await ws.cleanup();
  });

  describe('secrets, sandboxed or not', () => {
    for (const sandbox of ['off', 'auto'] as const) {
      it(`removes the API key and secret-named variables from the environment (sandbox ${sandbox})`, async () => {
        const { runner } = isolated({ sandbox });
        const result = await run(
          runner,
          `printenv ${KEY_ENV}; printenv ${TOKEN_ENV}; printenv RALPH_SANDBOX_TEST_PASSWORD; env | grep -c RALPH_SANDBOX_TEST || true`,
        );
        assert.equal(result.output.trim(), '0', result.output);
      });
    }

    it('passes a variable named in commands.env on purpose, redacted in the output', async () => {
      const { runner } = isolated({ sandbox: 'off', env: [TOKEN_ENV] });
      const result = await run(runner, `test -n "$${TOKEN_ENV}" && echo "has token"; printenv ${TOKEN_ENV}`);
      assert.match(result.output, /has token/);
      assert.ok(!result.output.includes(TOKEN), result.output);
      assert.match(result.output, /\[REDACTED\]/);
    });

    it('redacts a known secret value that reaches the output another way, live output included', async () => {
      await fs.writeFile(ws.path('leak.txt'), `key=${KEY}\n`);
      const { runner } = isolated({ sandbox: 'off' });
      const chunks: string[] = [];
      const result = await run(runner, 'cat leak.txt', { onOutput: (c) => chunks.push(c) });
      assert.equal(result.output.trim(), 'key=[REDACTED]');
      assert.ok(!chunks.join('').includes(KEY));
    });
  });

  describe('setsid survivors', () => {
    // the time limit runs out once the setsid child runs (a fixed one could run out before it started, and prove nothing)
    const limitedOnceSleeping = (sleep: string) =>
      new NodeCommandRunner({ killGraceMs: 1000, drainMs: 300, timeLimit: limitWhen(() => sleeping(sleep)) });
    for (const sandbox of ['off', 'auto'] as const) {
      it(`a setsid child of a command is gone after the timeout (sandbox ${sandbox})`, async () => {
        const sleep = uniqueSleep();
        const { runner } = isolated({ sandbox }, undefined, limitedOnceSleeping(sleep));
        const result = await run(runner, `setsid sleep ${sleep} >/dev/null 2>&1 & sleep 30`, { timeoutMs: 1500 });
        assert.equal(result.timedOut, true);
        assert.ok(await goneEventually(sleep), `setsid sleep ${sleep} survived`);
      });
    }

    it('a setsid child of a gate is gone after the gate timed out', async () => {
      const sleep = uniqueSleep();
      const gates = new ProcessGateRunner(isolated({}, undefined, limitedOnceSleeping(sleep)).runner);
      const result = await gates.run({
        gate: { name: 't', command: `setsid sleep ${sleep} & sleep 30`, kind: 'tests', required: true },
        cwd: ws.dir,
        timeoutMs: 1500,
      });
      assert.equal(result.timedOut, true);
      assert.ok(await goneEventually(sleep), `setsid sleep ${sleep} survived the gate`);
    });
  });

  describe('sandbox: required', () => {
    it('refuses clearly without bubblewrap and runs nothing', async () => {
      const { runner } = isolated({ sandbox: 'required' }, () => probeSandbox('/nonexistent/bwrap'));
      await assert.rejects(
        run(runner, 'touch ran'),
        (error: unknown) => error instanceof SandboxUnavailableError && /required/.test(error.message) && /bubblewrap/.test(error.message),
      );
      assert.equal(ws.exists('ran'), false);
    });

    it('auto without bubblewrap runs and warns once', async () => {
      const { runner } = isolated({ sandbox: 'auto' }, () => probeSandbox('/nonexistent/bwrap'));
      await run(runner, 'true');
      const second = await run(runner, 'echo again');
      assert.equal(second.exitCode, 0);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /without a sandbox/);
    });
  });

  describe('bubblewrap sandbox', function () {
    before(async function () {
      const probe = await probeSandbox();
      if (!probe.available) {
        console.log(`      skipped: no working bubblewrap here (${probe.reason})`);
        this.skip();
      }
    });

    it('keeps the workspace writable and the rest of the file system read-only', async () => {
      const { runner } = isolated({ sandbox: 'required' });
      const outside = path.join(os.tmpdir(), `ralph-sandbox-escape-${process.pid}-${Date.now()}`);
      const home = path.join(os.homedir(), `ralph-sandbox-escape-${process.pid}`);
      const ok = await run(runner, 'echo hi > inside.txt && mkdir -p dist && echo x > dist/a');
      assert.equal(ok.exitCode, 0, ok.output);
      assert.equal(await ws.read('inside.txt'), 'hi\n');
      const tmp = await run(runner, `echo x > ${outside}; cat ${outside}`);
      assert.equal(existsSync(outside), false, 'a write to /tmp reached the host');
      assert.match(tmp.output, /^x$/m, 'the private /tmp is usable inside');
      const homeWrite = await run(runner, `echo x > ${home}`);
      assert.notEqual(homeWrite.exitCode, 0);
      assert.match(homeWrite.output, /Read-only file system/);
      assert.equal(existsSync(home), false);
    });

    it("keeps .git and .ralph read-only except the task's progress notes", async () => {
      const { runner } = isolated({ sandbox: 'required' });
      const notes = ws.path('.ralph/progress/t1.md');
      const hook = await run(runner, 'echo "touch pwned" > .git/hooks/post-commit');
      assert.notEqual(hook.exitCode, 0);
      assert.equal(ws.exists('.git/hooks/post-commit'), false);
      const config = await run(runner, 'echo "{\\"gates\\":[]}" > .ralph/config.json');
      assert.notEqual(config.exitCode, 0);
      assert.equal(await ws.read('.ralph/config.json'), '{}\n');
      const commit = await run(runner, 'git add -A && git commit -qm sneaky');
      assert.notEqual(commit.exitCode, 0);
      const status = await run(runner, 'git status --short && git log --oneline | wc -l');
      assert.equal(status.exitCode, 0, status.output);
      const note = await run(runner, 'echo "next: fix it" > .ralph/progress/t1.md', { writablePaths: [notes] });
      assert.equal(note.exitCode, 0, note.output);
      assert.equal(await fs.readFile(notes, 'utf8'), 'next: fix it\n');
    });

    it('lets a person-approved command write the repository, never its hooks or config', async () => {
      const { runner } = isolated({ sandbox: 'required' });
      await ws.write('work.txt', 'one\n');
      const approved = await run(runner, 'git add -A && git commit -qm "approved commit" && git reset -q --hard HEAD', { approved: true });
      assert.equal(approved.exitCode, 0, approved.output);
      assert.equal(ws.git('log', '--format=%s', '-1').trim(), 'approved commit');
      const hook = await run(runner, 'echo "touch pwned" > .git/hooks/post-commit', { approved: true });
      assert.notEqual(hook.exitCode, 0);
      assert.equal(ws.exists('.git/hooks/post-commit'), false);
      const config = await run(runner, 'git config core.hooksPath /tmp/evil', { approved: true });
      assert.notEqual(config.exitCode, 0);
      assert.throws(() => ws.git('config', '--get', 'core.hooksPath'), 'core.hooksPath was not set');
      const ralph = await run(runner, 'echo "{}" > .ralph/config.json', { approved: true });
      assert.notEqual(ralph.exitCode, 0, "Ralph's own files stay read-only for approved commands too");
    });

    it("lets a person-approved command commit in a task's worktree, its repository's hooks read-only", async () => {
      const { runner } = isolated({ sandbox: 'required' });
      ws.git('worktree', 'add', '-q', '-b', 'ralph/t1', ws.path('.ralph/worktrees/t1'));
      const tree = ws.path('.ralph/worktrees/t1');
      const refused = await run(runner, 'echo a > a.txt && git add a.txt && git commit -qm sneaky', { cwd: tree });
      assert.notEqual(refused.exitCode, 0, "without approval the worktree's repository is read-only");
      const approved = await run(runner, 'git add a.txt && git commit -qm "approved in worktree"', { cwd: tree, approved: true });
      assert.equal(approved.exitCode, 0, approved.output);
      assert.equal(ws.git('log', '--format=%s', '-1', 'ralph/t1').trim(), 'approved in worktree');
      const hook = await run(runner, `echo "touch pwned" > ${ws.path('.git/hooks/post-commit')}`, { cwd: tree, approved: true });
      assert.notEqual(hook.exitCode, 0);
      assert.equal(ws.exists('.git/hooks/post-commit'), false);
    });

    it('has no network unless commands.network allows it', async () => {
      const server = http.createServer((_req, res) => res.end('reached'));
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const fetchCommand = `node -e "fetch('${url}').then(r=>r.text()).then(t=>console.log(t),e=>{console.log('failed');process.exit(3)})"`;
      try {
        const off = await run(isolated({ sandbox: 'required' }).runner, fetchCommand);
        assert.equal(off.exitCode, 3, off.output);
        assert.ok(!off.output.includes('reached'));
        const on = await run(isolated({ sandbox: 'required', network: true }).runner, fetchCommand);
        assert.equal(on.exitCode, 0, on.output);
        assert.match(on.output, /reached/);
      } finally {
        server.close();
      }
    });

    it('runs gates sandboxed too', async () => {
      const gates = new ProcessGateRunner(isolated({ sandbox: 'required' }).runner);
      const result = await gates.run({
        gate: { name: 'g', command: 'touch .git/gate-was-here; echo "home=$HOME"; printenv ' + KEY_ENV, kind: 'custom', required: true },
        cwd: ws.dir,
        timeoutMs: 10_000,
      });
      assert.equal(ws.exists('.git/gate-was-here'), false);
      assert.match(result.output, /Read-only file system/);
      assert.match(result.output, /home=\/tmp\/home/);
      assert.ok(!result.output.includes(KEY));
    });
  });
});

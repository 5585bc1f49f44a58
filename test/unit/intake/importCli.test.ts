import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseCli } from '../../../src/cli/args';
import { RalphPaths } from '../../../src/core/paths';
import { TaskStore } from '../../../src/core/tasks/store';
import { type ScriptedGitHub, startScriptedGitHub } from '../../fixtures/scriptedGitHub';
import { type ScriptedServer, startScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { CLI_ENV, runCli, runCliInProcess, runOnTerminal } from '../helpers/cliHarness';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { backlog, MILESTONES, OWNER, REPO, TOKEN } from '../../fixtures/intake/githubBacklog';

describe('ralph task import --github (CLI)', function () {
  this.timeout(90000);
  let ws: TempWorkspace;
  let github: ScriptedGitHub;
  let store: TaskStore;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# shop\n' } });
    github = await startScriptedGitHub({
      owner: OWNER,
      repo: REPO,
      issues: backlog(),
      milestones: MILESTONES,
      token: TOKEN,
      maxPerPage: 4,
    });
    env = { ...CLI_ENV, GITHUB_TOKEN: TOKEN, GITHUB_API_URL: github.url };
    assert.equal((await runCliInProcess(['init'], ws.dir, env)).code, 0);
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'ralph init');
    store = new TaskStore(new RalphPaths(ws.dir));
  });
  afterEach(async () => {
    await github.close();
    await ws.cleanup();
  });

  it('parses --github, --label (repeated), --milestone, --dry-run and --json, and rejects the rest', () => {
    assert.deepEqual(parseCli(['task', 'import', '--github', 'acme/shop', '--label', 'a', '--label', 'b', '--milestone', 'v1'], '/w'), {
      kind: 'task.import',
      workspace: '/w',
      repo: { owner: 'acme', repo: 'shop' },
      labels: ['a', 'b'],
      milestone: 'v1',
      dryRun: false,
      json: false,
    });
    assert.throws(() => parseCli(['task', 'import'], '/w'), /task import needs --github owner\/repo/);
    assert.throws(() => parseCli(['task', 'import', '--github', 'acme'], '/w'), /--github must be owner\/repo, got "acme"/);
    assert.throws(() => parseCli(['task', 'import', '--github', 'a/b', 'extra'], '/w'), /unexpected argument "extra"/);
  });

  it("imports, prints each issue's fate, exits 3 when some are flagged, and never shows or stores the token", async () => {
    const result = await runCli(['task', 'import', '--github', 'acme/shop', '--label', 'ralph'], ws.dir, env);
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout, /^10 issues: 5 added, 0 updated, 0 unchanged, 5 flagged\n/);
    assert.match(result.stdout, / {2}\+ GH-2 {2}#2 Lock accounts after failed sign-ins {2}\(after GH-1\)/);
    assert.match(result.stdout, / {2}✗ #3 Investigate flaky checkout: not imported: states no testable acceptance criterion/);
    assert.equal((await store.list()).length, 5);
    const everything = `${result.stdout}${result.stderr}${await fs.readFile(ws.path('.ralph/tasks.json'), 'utf8')}`;
    assert.ok(!everything.includes(TOKEN), 'the token is never printed or written');
    // again: nothing new, nothing duplicated
    const again = await runCli(['task', 'import', '--github', 'acme/shop', '--label', 'ralph', '--json'], ws.dir, env);
    const json = JSON.parse(again.stdout);
    assert.deepEqual(json.added, []);
    assert.equal(json.actions.filter((a: { kind: string }) => a.kind === 'unchanged').length, 5);
    assert.equal((await store.list()).length, 5);
  });

  it('--dry-run writes nothing; a GitHub failure exits 1 with the reason', async () => {
    const dry = await runCli(['task', 'import', '--github', 'acme/shop', '--milestone', 'v1', '--dry-run'], ws.dir, env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /2 issues: 2 to add, 0 to update, 0 unchanged \(dry run: nothing written\)/);
    assert.deepEqual(await store.list(), []);
    const denied = await runCli(['task', 'import', '--github', 'acme/shop'], ws.dir, { ...env, GITHUB_TOKEN: '' });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /ralph: GitHub refused the token \(401: Bad credentials\): none was given; set GITHUB_TOKEN/);
  });

  it('on a terminal asks for the promise of an issue without criteria', async () => {
    const result = await runOnTerminal(
      ['task', 'import', '--github', 'acme/shop', '--label', 'triage'],
      ws.dir,
      'checkout passes 50 runs in a row',
      env,
    );
    assert.equal(result.code, 0, result.stdout);
    assert.match(result.stdout, /#3 "Investigate flaky checkout" states no testable acceptance criterion\.\r?\nIts promise/);
    assert.equal((await store.get('GH-3')).promise, 'checkout passes 50 runs in a row');
  });

  it('tasks from issues run in parallel worktrees in dependency order, and their merge commits say Closes #N', async () => {
    let server: ScriptedServer | undefined;
    try {
      const write = (file: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }] });
      const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'written' } }] };
      server = await startScriptedServer({ steps: [write('signin.txt'), complete, write('lockout.txt'), complete] });
      await fs.writeFile(
        ws.path('.ralph/config.json'),
        JSON.stringify({
          llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
          loop: { maxParallel: 2, maxIterations: 3 },
        }),
      );
      ws.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
      assert.equal((await runCli(['task', 'import', '--github', 'acme/shop', '--milestone', 'v1'], ws.dir, env)).code, 0);
      // #2 is labelled `bug`, so it is imported as a bugfix that needs a fail-to-pass proof; this
      // workspace has no tests gate to give one, so the person lets it go without (as the run would ask)
      assert.equal((await store.get('GH-2')).type, 'bugfix');
      assert.equal((await runCli(['task', 'edit', 'GH-2', '--proof', 'none'], ws.dir, env)).code, 0);
      const run = await runCli(['run'], ws.dir, env);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.deepEqual(
        (await store.list()).map((t) => [t.id, t.status]),
        [
          ['GH-1', 'done'],
          ['GH-2', 'done'],
        ],
      );
      const log = ws.git('log', 'main', '--format=%B%x00');
      assert.match(log, /ralph\(GH-1\): Sign-in form\n\nCloses #1\n\nRalph-Task: GH-1/);
      assert.match(log, /ralph\(GH-2\): Lock accounts after failed sign-ins\n\nCloses #2\n\nRalph-Task: GH-2/);
      assert.match(run.stdout, /worktree|merge merged/, 'the run went through worktrees and the merge queue');
    } finally {
      await server?.close();
    }
  });
});

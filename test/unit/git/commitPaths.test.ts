import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { onlyExclusionsReported, stageWork } from '../../../src/core/git/commitPaths';
import { GitCommandError } from '../../../src/core/git/gitExec';
import { GitService } from '../../../src/core/git/gitService';
import { mergeTargetInto } from '../../../src/core/git/integrate';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** npm's own packages: everything ignored, what ships re-included. */
const ALLOWLIST = ['/*', '!/lib/', '!/test/', '!/package.json', '!/.gitignore', 'tap-testdir*/', ''].join('\n');

/** Ralph's files as a run leaves them in the workspace. */
async function bookkeeping(ws: TempWorkspace): Promise<void> {
  await ws.write('.ralph/tasks.json', '{"version":1,"tasks":[]}\n');
  await ws.write('.ralph/config.json', '{}\n');
  await ws.write('.ralph/state/T-001.json', '{}\n');
  await ws.write('.ralph/runs/r.ndjson', '{}\n');
  await ws.write('.ralph/reports/T-001/iteration-1.md', '# r\n');
  await ws.write('.ralph/observations.md', '- low\n');
  await ws.write('.ralph/tasks.json.lock/x', '');
  await ws.write('.ralph/progress/T-001.md', '# notes\n');
}

const committed = (ws: TempWorkspace, rev = 'HEAD') => ws.git('show', '--name-only', '--format=', rev).split('\n').filter(Boolean).sort();

describe("the loop's commits, whatever the repository's ignore rules say (real git)", () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'lib/a.js': 'a\n', 'package.json': '{}\n' }, prefix: 'ralph-ignore-' });
  });
  afterEach(async () => ws.cleanup());

  it('an allowlist .gitignore (/* then !/lib/ …, as npm packages have): the fix is committed, .ralph/ and what is not re-included are not', async () => {
    await ws.write('.gitignore', ALLOWLIST);
    ws.git('add', '.gitignore');
    ws.git('commit', '-qm', 'allowlist');
    await bookkeeping(ws);
    await ws.write('lib/a.js', 'fixed\n');
    await ws.write('test/a.test.js', 'test\n');
    await ws.write('tap-testdir-a/out.txt', 'out\n');
    await ws.write('coverage/lcov.info', 'x\n');
    const git = new GitService(ws.dir);
    assert.equal(await git.hasChangesToCommit(), true);
    const commit = await git.commitAll('ralph(T-001): iteration 1');
    assert.deepEqual(commit?.files.sort(), ['lib/a.js', 'test/a.test.js']);
    assert.deepEqual(committed(ws), ['lib/a.js', 'test/a.test.js']);
    assert.equal(await git.hasChangesToCommit(), false);
  });

  it('an ignored .ralph/ (its tracked task store in it too), a nested .gitignore and core.excludesFile: only the work is committed', async () => {
    await ws.write('.ralph/tasks.json', '{}\n');
    ws.git('add', '.ralph/tasks.json');
    ws.git('commit', '-qm', 'tracked store');
    await ws.write('.gitignore', '.ralph/\n');
    await ws.write('test/.gitignore', 'output/\n');
    const excludes = `${await ws.outsideDir()}/excludes`;
    await fs.writeFile(excludes, '*.log\n');
    ws.git('config', 'core.excludesFile', excludes);
    await bookkeeping(ws);
    await ws.write('.ralph/tasks.json', '{"changed":true}\n');
    await ws.write('lib/a.js', 'fixed\n');
    await ws.write('test/output/result.txt', 'r\n');
    await ws.write('test/a.test.js', 't\n');
    await ws.write('run.log', 'log\n');
    const commit = await new GitService(ws.dir).commitAll('ralph(T-001): iteration 1');
    assert.deepEqual(commit?.files.sort(), ['.gitignore', 'lib/a.js', 'test/.gitignore', 'test/a.test.js']);
    assert.deepEqual(committed(ws), ['.gitignore', 'lib/a.js', 'test/.gitignore', 'test/a.test.js']);
    assert.equal(ws.git('show', 'HEAD:.ralph/tasks.json'), '{}', 'the tracked store keeps its committed content');
  });

  it("Ralph's bookkeeping is never committed, even with no .ralph/.gitignore at all; the progress notes are the task's work", async () => {
    await bookkeeping(ws);
    await ws.write('lib/a.js', 'fixed\n');
    const git = new GitService(ws.dir);
    const commit = await git.commitAll('ralph(T-001): iteration 1');
    assert.deepEqual(commit?.files.sort(), ['.ralph/progress/T-001.md', 'lib/a.js']);
    // nothing but bookkeeping changed: nothing to commit
    await ws.write('.ralph/tasks.json', '{"v":2}\n');
    await ws.write('.ralph/state/T-001.json', '{"v":2}\n');
    assert.equal(await git.hasChangesToCommit(), false);
    assert.equal(await git.commitAll('ralph(T-001): iteration 2'), undefined);
  });

  it("the links Ralph made into a worktree are never committed, whatever the ignore rules; a tracked path of that name is the task's work", async () => {
    await ws.write('.gitignore', '!node_modules\n');
    const deps = await ws.outsideDir();
    await fs.symlink(deps, ws.path('node_modules'));
    await ws.write('lib/a.js', 'fixed\n');
    const git = new GitService(ws.dir, undefined, undefined, ['node_modules']);
    assert.deepEqual((await git.commitAll('iteration 1'))?.files.sort(), ['.gitignore', 'lib/a.js']);
    // a repository that tracks vendor/: never linked, so committed as work
    await ws.write('vendor/x.js', 'x\n');
    const vendored = new GitService(ws.dir, undefined, undefined, ['node_modules', 'vendor']);
    assert.deepEqual((await vendored.commitAll('iteration 2'))?.files, ['vendor/x.js']);
  });

  it('the uncommitted work a merge of the target takes first is staged the same way (an allowlist, an ignored .ralph/)', async () => {
    await ws.write('.gitignore', ALLOWLIST);
    ws.git('add', '.gitignore');
    ws.git('commit', '-qm', 'allowlist');
    ws.git('branch', 'ralph/T-001');
    ws.git('worktree', 'add', '-q', ws.path('.ralph/worktrees/T-001'), 'ralph/T-001');
    const wt = ws.path('.ralph/worktrees/T-001');
    await fs.mkdir(`${wt}/.ralph/progress`, { recursive: true });
    await fs.writeFile(`${wt}/.ralph/progress/T-001.md`, 'notes\n');
    await fs.writeFile(`${wt}/lib/a.js`, 'task\n');
    await ws.write('lib/b.js', 'main\n');
    ws.git('add', 'lib/b.js');
    ws.git('commit', '-qm', 'main moves');
    assert.deepEqual(await mergeTargetInto(wt, 'main', 'T-001'), []);
    const log = ws.git('log', '--format=%s', 'ralph/T-001').split('\n');
    assert.equal(log[0], 'ralph(T-001): merge main (merge queue)');
    assert.equal(log[1], 'ralph(T-001): uncommitted work before merging main');
    assert.deepEqual(committed(ws, 'ralph/T-001~1'), ['lib/a.js']);
  });

  it("git's report of ignored paths is taken only when it names the exclusions; any other failure of git add still fails", async () => {
    const report = (...paths: string[]) =>
      ['The following paths are ignored by one of your .gitignore files:', ...paths, 'hint: Use -f if you really want to add them.'].join(
        '\n',
      );
    const excluded = ['.ralph/tasks.json', '.ralph/state', 'node_modules', '.ralph/'];
    assert.equal(onlyExclusionsReported(report('.ralph'), excluded), true);
    assert.equal(onlyExclusionsReported(report('.ralph/tasks.json'), excluded), true);
    assert.equal(onlyExclusionsReported(report('node_modules'), excluded), true);
    assert.equal(onlyExclusionsReported(report('.ralph', 'secret.env'), excluded), false, 'a path of the work is no exclusion');
    assert.equal(onlyExclusionsReported(report(), excluded), false);
    assert.equal(onlyExclusionsReported('fatal: pathspec is beyond a symbolic link', excluded), false);
    // a real failure: the index is locked
    await ws.write('lib/a.js', 'fixed\n');
    await ws.write('.git/index.lock', '');
    await assert.rejects(stageWork(ws.dir), (error: unknown) => error instanceof GitCommandError && /index\.lock/.test(error.message));
  });
});

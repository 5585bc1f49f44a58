import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { dependencyMounts, worktreeCacheDir } from '../../../src/core/commands/dependencyMounts';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { IsolatedCommandRunner, probeSandbox } from '../../../src/core/commands/sandbox';
import { seatbeltProfile } from '../../../src/core/commands/seatbelt';
import { SecretRedactor } from '../../../src/core/commands/secrets';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { WorkspaceScope } from '../../../src/core/guards/workspaceScope';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** A test runner's wrapper as nyc and ava are: it keeps a cache under node_modules/.cache of the folder it runs in (find-cache-dir). */
const CACHY = `const fs = require('fs'), path = require('path');
const dir = path.join(process.cwd(), 'node_modules', '.cache', 'cachy');
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, process.argv[2] || 'entry'), String(process.pid));
console.log('cachy: cached in ' + dir);
`;

describe('installed dependencies in the sandbox: read-only, their node_modules/.cache writable (each worktree its own)', function () {
  if (process.platform !== 'linux') return;
  this.timeout(60_000);
  let ws: TempWorkspace;
  before(async function () {
    const probe = await probeSandbox();
    if (!probe.available) {
      console.log(`      skipped: no working bubblewrap here (${probe.reason})`);
      this.skip();
    }
  });
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { '.gitignore': 'node_modules/\n', 'src/a.js': 'a\n' } });
    await ws.write('node_modules/cachy/index.js', CACHY);
  });
  afterEach(async () => ws.cleanup());

  const runner = (sandbox: 'required' | 'off' = 'required') =>
    new IsolatedCommandRunner(
      new NodeCommandRunner(),
      { root: ws.dir, commands: { sandbox, network: false, env: [] }, keyVariables: [], links: ['node_modules'] },
      new SecretRedactor(),
    );
  const run = (cwd: string, command: string, sandbox: 'required' | 'off' = 'required') =>
    runner(sandbox).run({ command, cwd, timeoutMs: 20_000, maxOutputChars: 20_000, purpose: 'gate' });
  const cachy = (name = 'entry') => `node node_modules/cachy/index.js ${name}`;

  it('in the workspace: the tool writes its cache there; the packages and a new package cannot be written; the project can', async () => {
    const cached = await run(ws.dir, cachy());
    assert.equal(cached.exitCode, 0, cached.output);
    assert.ok(existsSync(ws.path('node_modules/.cache/cachy/entry')));
    const tamper = await run(ws.dir, 'echo "module.exports = () => true" > node_modules/cachy/index.js');
    assert.notEqual(tamper.exitCode, 0);
    assert.match(tamper.output, /Read-only file system/);
    assert.equal(await ws.read('node_modules/cachy/index.js'), CACHY);
    assert.notEqual((await run(ws.dir, 'mkdir node_modules/evil')).exitCode, 0);
    assert.equal((await run(ws.dir, 'echo b > src/a.js')).exitCode, 0);
    assert.equal(await ws.read('src/a.js'), 'b\n');
  });

  it("in a task's worktree: a cache of its own (in its git admin dir), never the workspace's nor another task's, gone with the worktree", async () => {
    const worktrees = new WorktreeManager(ws.dir, ['node_modules']);
    const a = await worktrees.create('T-001', 'main');
    const b = await worktrees.create('T-002', 'main');
    assert.equal((await run(a.path, cachy('from-a'))).exitCode, 0);
    const own = worktreeCacheDir(a.path, 'node_modules')!;
    assert.ok(existsSync(path.join(own, 'cachy', 'from-a')), 'the task has its cache');
    assert.match(own, /\.git\/worktrees\/T-001\/ralph-cache\/node_modules\/\.cache$/);
    assert.equal(existsSync(ws.path('node_modules/.cache/cachy/from-a')), false, "the workspace's cache is untouched");
    const seen = await run(b.path, 'ls node_modules/.cache/cachy 2>&1 || true');
    assert.doesNotMatch(seen.output, /from-a/, "another task's cache is not seen");
    const tamper = await run(a.path, 'echo x > node_modules/cachy/index.js');
    assert.notEqual(tamper.exitCode, 0);
    assert.equal(await ws.read('node_modules/cachy/index.js'), CACHY);
    await worktrees.remove('T-001', { deleteBranch: true });
    assert.equal(existsSync(own), false);
  });

  it("the merge queue's and a proof's scratch worktrees get theirs too; without the sandbox the tool writes the workspace's (nothing is read-only then)", async () => {
    const worktrees = new WorktreeManager(ws.dir, ['node_modules']);
    const scratch = ws.path('.ralph/worktrees/_proof-T-001');
    ws.git('worktree', 'add', '--detach', '-q', scratch, 'main');
    await worktrees.linkShared(scratch);
    assert.equal((await run(scratch, cachy('proof'))).exitCode, 0);
    assert.ok(existsSync(path.join(worktreeCacheDir(scratch, 'node_modules')!, 'cachy', 'proof')));
    const off = await run(scratch, cachy('unsandboxed'), 'off');
    assert.equal(off.exitCode, 0, off.output);
    assert.ok(existsSync(ws.path('node_modules/.cache/cachy/unsandboxed')));
  });

  it("the agent's file tools cannot write the installed dependencies either (in the workspace; in a worktree they lead out of it)", async () => {
    const scope = new WorkspaceScope(ws.dir, ['node_modules']);
    await assert.rejects(
      scope.resolve('node_modules/cachy/index.js', { forWrite: true }),
      /inside node_modules, the installed dependencies \(worktrees\.link\): they are read-only to the agent/,
    );
    await assert.rejects(scope.resolve('node_modules/.cache/x', { forWrite: true }), /read-only to the agent/);
    assert.equal(await scope.resolve('node_modules/cachy/index.js'), ws.path('node_modules/cachy/index.js'), 'reading is fine');
    assert.equal(await scope.resolve('src/node_modules_notes.md', { forWrite: true }), ws.path('src/node_modules_notes.md'));
  });

  it('the mounts: dependencies that exist only, the cache folder made where missing, a linked .cache left alone', async () => {
    await fs.rm(ws.path('node_modules/.cache'), { recursive: true, force: true });
    await ws.write('fixtures/big.bin', 'x');
    const mounts = dependencyMounts(ws.dir, ['node_modules', 'vendor', 'fixtures']);
    assert.deepEqual(mounts.readOnly, [ws.path('node_modules'), ws.path('fixtures')]);
    assert.equal(existsSync(ws.path('fixtures/.cache')), false, 'the cache convention is that of node_modules');
    assert.deepEqual(mounts.caches, [{ source: ws.path('node_modules/.cache'), target: ws.path('node_modules/.cache') }]);
    assert.ok(existsSync(ws.path('node_modules/.cache')));
    // macOS: no mount there; the packages denied, the (shared) cache allowed
    const profile = seatbeltProfile(
      { root: ws.dir, network: false, writablePaths: [], readOnlyPaths: [ws.path('node_modules')], cacheBinds: mounts.caches },
      { home: ws.dir, temp: await ws.outsideDir() },
    );
    assert.match(profile, new RegExp(`\\(deny file-write\\* \\(subpath "${ws.path('node_modules')}"\\)\\)`));
    assert.ok(
      profile.indexOf('(deny file-write* (subpath') < profile.indexOf(`(allow file-write* (subpath "${ws.path('node_modules/.cache')}`),
    );
    await fs.rm(ws.path('node_modules/.cache'), { recursive: true });
    await fs.symlink(await ws.outsideDir(), ws.path('node_modules/.cache'));
    assert.deepEqual(dependencyMounts(ws.dir, ['node_modules']).caches, []);
  });
});

import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { diagnoseEnvironment, environmentMessage, type EnvironmentContext } from '../../../src/core/gates/environmentFault';
import type { TestCounts } from '../../../src/core/gates/parsers/types';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** Counts with `failures` failing tests, each with its message. */
const failing = (...messages: string[]): TestCounts => ({
  passed: 3,
  failed: messages.length,
  skipped: 0,
  total: 3 + messages.length,
  failures: messages.map((message, i) => ({ name: `test ${i}`, message })),
});

describe('a gate that cannot run where the task runs: checked evidence that explains the failure, or nothing (real files, git, sockets)', function () {
  this.timeout(30_000);
  let ws: TempWorkspace;
  let wt: string;
  const ctx = (cwd: string, extra: Partial<EnvironmentContext> = {}): EnvironmentContext => ({
    cwd,
    sandboxed: true,
    network: false,
    links: ['node_modules'],
    ...extra,
  });
  before(async () => {
    ws = await makeTempWorkspace({
      commit: true,
      files: {
        '.gitignore': 'node_modules/\ndist/\nfixtures/secret.json\n',
        'src/a.js': 'a\n',
        'src/b.js': 'b\n',
        'fixtures/data.json': '{}\n',
      },
    });
    await ws.write('node_modules/runner/index.js', '');
    await ws.write('dist/index.js', 'built\n');
    await ws.write('fixtures/secret.json', '{}\n');
    wt = (await new WorktreeManager(ws.dir, ['node_modules']).create('T-001', 'main')).path;
  });
  after(async () => ws.cleanup());

  describe('a write the sandbox refused', () => {
    it('into the installed dependencies: their cache is the place, or the sandbox off', async () => {
      const output = `Error: EROFS: read-only file system, mkdir '${wt}/node_modules/.vite/deps'\n    at mkdirSync`;
      const fault = await diagnoseEnvironment(output, undefined, ctx(wt));
      assert.match(fault!.why, /inside the installed dependencies, which are read-only/);
      assert.match(fault!.remedy, /node_modules\/\.cache .*"commands\.sandbox": "off"/);
      assert.match(fault!.evidence, /^Error: EROFS/);
    });

    it('into their cache folder, when it is not writable (a link to a read-only place)', async () => {
      const output = `Error: EROFS: read-only file system, mkdir '${wt}/node_modules/.cache/nyc'`;
      const fault = await diagnoseEnvironment(output, undefined, ctx(wt));
      assert.match(fault!.why, /in the installed dependencies' cache folder, which is not writable here/);
      assert.match(fault!.remedy, /Make node_modules\/\.cache a plain folder/);
    });

    it('into your working tree from a worktree: loop.maxParallel 1; elsewhere: the sandbox', async () => {
      const intoWorkspace = await diagnoseEnvironment(`touch: cannot touch '${ws.dir}/out/x': Read-only file system`, undefined, ctx(wt));
      assert.match(intoWorkspace!.why, /in your working tree outside the task's worktree/);
      assert.match(intoWorkspace!.remedy, /"loop\.maxParallel": 1/);
      const elsewhere = await diagnoseEnvironment(`OSError: [Errno 30] Read-only file system: '/var/lib/app/db'`, failing(), ctx(ws.dir));
      assert.match(elsewhere!.why, /writes \/var\/lib\/app\/db outside the folder the sandbox lets commands write/);
      assert.match(elsewhere!.remedy, /"commands\.sandbox": "off"/);
    });

    it('every test passed and the tool died after them (ava): it explains the failure', async () => {
      const tests: TestCounts = { passed: 7, failed: 0, skipped: 0, total: 7, failures: [] };
      assert.ok(await diagnoseEnvironment(`✖ Internal error\nEROFS: read-only file system, open '/opt/x'`, tests, ctx(ws.dir)));
    });

    it('no alarm: a test that fails on its own assertion beside a warning, or no sandbox at all', async () => {
      const warning = `warn: could not write cache: EROFS: read-only file system, open '${wt}/node_modules/.vite/x'`;
      assert.equal(await diagnoseEnvironment(warning, failing('expected 2 to equal 3'), ctx(wt)), undefined);
      assert.equal(await diagnoseEnvironment(warning, undefined, ctx(wt, { sandboxed: false })), undefined);
      // failures the output counted without naming them: nothing can be told
      const unnamed: TestCounts = { passed: 1, failed: 2, skipped: 0, total: 3, failures: [] };
      assert.equal(await diagnoseEnvironment(warning, unnamed, ctx(wt)), undefined);
    });
  });

  describe('a file of the working tree the worktree lacks', () => {
    it('untracked or ignored there: link it (worktrees.link), commit it, or run in the working tree', async () => {
      const output = `Error: ENOENT: no such file or directory, open '${wt}/fixtures/secret.json'`;
      const fault = await diagnoseEnvironment(
        output,
        failing(`ENOENT: no such file or directory, open '${wt}/fixtures/secret.json'`),
        ctx(wt),
      );
      assert.match(fault!.why, /needs fixtures\/secret\.json, which is in your working tree but not committed/);
      assert.match(fault!.remedy, /Add "fixtures\/secret\.json" to "worktrees\.link".*"loop\.maxParallel": 1/);
    });

    it("a relative require of a build output (node's Require stack names the requiring file)", async () => {
      const output = [
        "Error: Cannot find module '../dist/index.js'",
        'Require stack:',
        `- ${wt}/test/a.test.js`,
        '    at Module._resolveFilename (node:internal/modules/cjs/loader:1140:15)',
      ].join('\n');
      const fault = await diagnoseEnvironment(output, undefined, ctx(wt, { sandboxed: false }));
      assert.match(fault!.why, /needs dist, which is in your working tree but not committed/);
    });

    it('no alarm: a tracked file the agent deleted, a file missing everywhere, the same run in the workspace', async () => {
      await fs.rm(path.join(wt, 'src/b.js'));
      const deleted = `Error: ENOENT: no such file or directory, open '${wt}/src/b.js'`;
      assert.equal(await diagnoseEnvironment(deleted, undefined, ctx(wt)), undefined);
      const nowhere = `Error: ENOENT: no such file or directory, open '${wt}/fixtures/missing.json'`;
      assert.equal(await diagnoseEnvironment(nowhere, undefined, ctx(wt)), undefined);
      const inPlace = `Error: ENOENT: no such file or directory, open '${ws.dir}/fixtures/other.json'`;
      assert.equal(await diagnoseEnvironment(inPlace, undefined, ctx(ws.dir)), undefined);
    });
  });

  describe('a path into the working tree from a worktree', () => {
    it('its code or configuration reached the workspace: loop.maxParallel 1', async () => {
      const output = `TypeError: x is not a function\n    at Object.<anonymous> (${ws.dir}/src/a.js:1:7)`;
      const fault = await diagnoseEnvironment(output, undefined, ctx(wt, { sandboxed: false }));
      assert.match(fault!.why, new RegExp(`reaches ${ws.dir}/src/a\\.js in your working tree instead of the task's worktree`));
    });

    it("no alarm: the linked dependencies, git's and Ralph's own folders, the worktree itself", async () => {
      const output = [
        `    at run (${ws.dir}/node_modules/runner/index.js:3:9)`,
        `fatal: ${ws.dir}/.git/worktrees/T-001/index.lock`,
        `log: ${ws.dir}/.ralph/reports/T-001/gates/x.log`,
        `    at Object.<anonymous> (${wt}/src/a.js:1:7)`,
      ].join('\n');
      assert.equal(await diagnoseEnvironment(output, undefined, ctx(wt, { sandboxed: false })), undefined);
    });
  });

  describe('a service or the network the sandbox does not give', () => {
    it('a refused connection to a service that listens on this machine (tried from here): commands.network', async () => {
      const server = net.createServer((s) => s.end());
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      const port = (server.address() as net.AddressInfo).port;
      try {
        const refused = `Error: connect ECONNREFUSED 127.0.0.1:${port}`;
        const fault = await diagnoseEnvironment(refused, failing(refused, refused), ctx(ws.dir));
        assert.match(fault!.why, new RegExp(`connects to 127\\.0\\.0\\.1:${port}, a service running on this machine`));
        assert.match(fault!.remedy, /"commands\.network": true/);
        assert.equal(await diagnoseEnvironment(refused, undefined, ctx(ws.dir, { network: true })), undefined, 'the network was given');
      } finally {
        await new Promise((done) => server.close(done));
      }
      // nothing listens there: the test's own server did not start — the task's to fix
      assert.equal(await diagnoseEnvironment(`Error: connect ECONNREFUSED 127.0.0.1:${port}`, undefined, ctx(ws.dir)), undefined);
    });

    it('no network at all (a name not resolved, a network not reached)', async () => {
      const fault = await diagnoseEnvironment('Error: getaddrinfo EAI_AGAIN registry.npmjs.org', undefined, ctx(ws.dir));
      assert.match(fault!.why, /needs the network \(EAI_AGAIN\)/);
    });
  });

  it('the sentence a person reads: the gate, its command, where, why, the evidence, what to set, where the log is', async () => {
    const fault = (await diagnoseEnvironment(`EROFS: read-only file system, mkdir '${wt}/node_modules/x'`, undefined, ctx(wt)))!;
    const text = environmentMessage({ name: 'tests', command: 'npm test' }, fault, { worktree: true, logPath: '/l/tests.log' });
    assert.match(
      text,
      /^the gate tests \(`npm test`\) cannot run in a task's worktree: it writes .*node_modules\/x, inside the installed dependencies.*\. Its output: "EROFS: read-only file system, mkdir '.*'"\. Make the tool .*\. It is not the task's doing, so the task stopped at its first run of the gates instead of iterating \(full output: \/l\/tests\.log\)$/,
    );
  });
});

import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { STORED_FILES_MAX, STORED_TEXT_MAX } from '../../../src/core/util/bounded';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const MB = 1024 * 1024;

/** Bytes under `dir`, every file. */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(file);
    else if (entry.isFile()) total += (await fs.stat(file)).size;
  }
  return total;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(file)));
    else out.push(file);
  }
  return out;
}

/** A gate that prints 50 MB (numbered lines) and fails until `fixed` exists. */
const LOUD_GATE = `node -e "const line = 'x'.repeat(1000); let out = ''; for (let i = 0; i < 51200; i++) { out += 'line ' + i + ' ' + line + '\\n'; if (out.length > 1e6) { process.stdout.write(out); out = ''; } } process.stdout.write(out + 'THE END\\n'); process.exitCode = require('fs').existsSync('fixed') ? 0 : 1"`;

describe('disk stays bounded (gate logs, reports, checkpoints, run logs, the task store)', function () {
  this.timeout(300000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n', '.gitignore': 'node_modules/\n' } });
    server = await startScriptedServer();
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  it('a 50 MB gate output twice, a 100,000-file iteration and a 200 kB BLOCKED reason keep .ralph/ within the documented bounds', async () => {
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
      loop: { maxIterations: 3, maxParallel: 1 },
      // a rule the person set lets the agent's inline script run without a sandbox (the rules would ask before it)
      commands: { sandbox: 'off', timeoutMs: 240000, allow: ['node -e *'] },
      gates: [{ name: 'loud', kind: 'custom', command: LOUD_GATE, required: true, timeoutMs: 240000 }],
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    const big = await runCliInProcess(
      ['task', 'add', 'Many files', '--prompt', 'make the data files', '--promise', 'data/ holds 100000 files'],
      ws.dir,
    );
    const blocked = await runCliInProcess(['task', 'add', 'Blocked', '--prompt', 'cannot be done', '--promise', 'never'], ws.dir);
    const reason = `the sky is falling ${'and falling '.repeat(17_000)}`;
    assert.ok(reason.length > 200_000);
    server.push(
      // iteration 1: 100,000 files, the gate fails after 50 MB of output
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              // 100,000 empty files: hard links to two empty files (ext4 allows 65,000 links to one), a fifth of the
              // CPU of creating 100,000 inodes; to git and to Ralph they are 100,000 files like any others
              command: `node -e "const fs = require('fs'); fs.mkdirSync('data'); for (let i = 0; i < 100000; i++) if (i % 50000) fs.linkSync('data/f' + (i - (i % 50000)), 'data/f' + i); else fs.writeFileSync('data/f' + i, '')"`,
              timeoutMs: 200000,
            },
          },
        ],
      },
      { content: 'made the files; the gate decides' },
      // iteration 2: fixed, complete; the gate passes after 50 MB again
      { toolCalls: [{ name: 'write_file', arguments: { path: 'fixed', content: 'yes\n' } }] },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'data/ has the files' } }] },
      // the second task blocks with a 200 kB reason
      { content: `<ralph>BLOCKED:${reason}</ralph>` },
    );
    const run = await runCli(['run'], ws.dir);
    assert.equal(run.code, 3, run.stderr + run.stdout.slice(-3000));
    const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
    assert.deepEqual(
      tasks.map((t) => t.status),
      ['done', 'blocked'],
    );
    assert.equal(ws.git('ls-tree', '--name-only', 'HEAD', 'data/f99999'), 'data/f99999', 'the files are committed');
    const [bigId, blockedId] = [big.stdout.trim(), blocked.stdout.trim()];
    const first = ws.git('log', '--format=%H', '-F', `--grep=ralph(${bigId}): iteration 1`);
    assert.match(ws.git('show', '--shortstat', '--format=', first), /^10000\d files changed/);

    // gate logs: ≤ 1 MiB each (reports.logMaxKb), with the head, the end and the gap said
    const logs = (await filesUnder(ws.path('.ralph/reports', bigId, 'gates'))).sort();
    assert.equal(logs.length, 2);
    for (const log of logs) {
      const text = await fs.readFile(log, 'utf8');
      assert.ok(Buffer.byteLength(text) <= MB + 300, `${log}: ${Buffer.byteLength(text)} bytes`);
      assert.match(text, /^line 0 x/);
      assert.match(text, /THE END\n$/);
      assert.match(
        text,
        /… \[\d+ bytes of output left out here: a gate log keeps its first and last part, 1048576 bytes in all \(reports\.logMaxKb\)\] …/,
      );
    }
    // checkpoint, its backup, the final report, the run log: small, with the file list summarized
    for (const file of [`.ralph/state/${bigId}.json`, `.ralph/state/${bigId}.json.bak`]) {
      assert.ok((await fs.stat(ws.path(file))).size < 100 * 1024, `${file}: ${(await fs.stat(ws.path(file))).size} bytes`);
    }
    const checkpoint = JSON.parse(await ws.read(`.ralph/state/${bigId}.json`)) as {
      history: { filesChanged: string[]; filesChangedTotal?: number }[];
    };
    assert.equal(checkpoint.history[0].filesChanged.length, STORED_FILES_MAX);
    assert.ok((checkpoint.history[0].filesChangedTotal ?? 0) >= 100_000, String(checkpoint.history[0].filesChangedTotal));
    const final = await ws.read(`.ralph/reports/${bigId}/final.md`);
    assert.ok(final.length < 64 * 1024, `final.md: ${final.length}`);
    assert.match(final, /… and 998\d\d more \(1000\d\d in all\)/);
    assert.match(await ws.read(`.ralph/reports/${bigId}/iteration-1.md`), /\(1000\d\d files\)/);
    const [runLog] = await filesUnder(ws.path('.ralph/runs'));
    assert.ok((await fs.stat(runLog)).size < MB, `run log: ${(await fs.stat(runLog)).size}`);
    assert.match(await fs.readFile(runLog, 'utf8'), /"… and 998\d\d more \(1000\d\d in all\)"/);
    // the 200 kB reason: bounded in the store, the checkpoint and the reports
    const stored = tasks[1].blockedReason ?? '';
    assert.ok(stored.length <= STORED_TEXT_MAX + 60, `blockedReason: ${stored.length}`);
    assert.match(stored, /more characters not kept\]$/);
    assert.ok((await fs.stat(ws.path('.ralph/tasks.json'))).size < 32 * 1024);
    assert.ok((await fs.stat(ws.path(`.ralph/state/${blockedId}.json`))).size < 32 * 1024);
    assert.ok((await fs.stat(ws.path(`.ralph/reports/${blockedId}/final.md`))).size < 32 * 1024);
    // everything Ralph keeps in .ralph/ for this night's work: a few MB, not 100+
    const ralph = await sizeOf(ws.path('.ralph'));
    assert.ok(ralph < 4 * MB, `.ralph/ holds ${ralph} bytes`);

    // a smaller budget: the next run prunes the oldest files first (the first gate log before the second), final reports last
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ ...config, reports: { maxTotalMb: 1.5 } }));
    const again = await runCli(['run'], ws.dir);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.match(
      again.stdout,
      /\.ralph\/reports and \.ralph\/runs held [\d.]+ MB, over their budget of 1\.5 MB \(reports\.maxTotalMb\): removed the \d+ oldest files?/,
    );
    const kept = (await sizeOf(ws.path('.ralph/reports'))) + (await sizeOf(ws.path('.ralph/runs')));
    assert.ok(kept <= 1.5 * MB, `kept ${kept}`);
    assert.equal(ws.exists(path.relative(ws.dir, logs[0])), false, 'the oldest gate log went first');
    assert.equal(ws.exists(`.ralph/reports/${bigId}/final.md`), true, 'final reports go last');
    assert.equal(ws.exists(`.ralph/reports/${blockedId}/final.md`), true);
  });
});

import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeCacheDir, verbFamily } from '../../../src/cli/codeCache';
import { CLI_ENV, runCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** The cache files in `dir`, name → their first line (the verbs the cache was made after). */
async function cacheFiles(dir: string): Promise<Map<string, string[]>> {
  const files = new Map<string, string[]>();
  for (const name of await fs.readdir(dir).catch(() => [])) {
    const text = await fs.readFile(path.join(dir, name), 'latin1');
    files.set(name, (JSON.parse(text.slice(0, text.indexOf('\n'))) as { verbs: string[] }).verbs);
  }
  return files;
}

/** The `ralph` launcher's V8 code cache (src/cli/codeCache.ts), with the real bundle in child processes. */
describe("the CLI's code cache", function () {
  this.timeout(60_000);
  let ws: TempWorkspace;
  let cache: string;
  const env = () => ({ ...CLI_ENV, RALPH_CODE_CACHE: cache });
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    cache = path.join(ws.dir, '..', `${path.basename(ws.dir)}-cache`);
  });
  afterEach(async () => {
    await ws.cleanup();
    await fs.rm(cache, { recursive: true, force: true });
  });

  it('is made after the first start, read back by the next one (not written again), and grows by each new verb', async () => {
    const first = await runCli(['--version'], ws.dir, env());
    assert.deepEqual(first, { code: 0, stdout: '0.1.0\n', stderr: '' });
    const made = await cacheFiles(cache);
    assert.equal(made.size, 1, [...made.keys()].join(', '));
    const [name, verbs] = [...made][0];
    assert.match(name, /^cli-.+\.bin$/);
    assert.deepEqual(verbs, ['--version']);
    const file = path.join(cache, name);
    const before = await fs.stat(file);

    // V8 took it: a rejected cache would have been written again
    assert.deepEqual(await runCli(['--version'], ws.dir, env()), first);
    assert.equal((await fs.stat(file)).mtimeMs, before.mtimeMs);

    const init = await runCli(['init', '--json'], ws.dir, env());
    assert.equal(init.code, 0, init.stderr);
    assert.deepEqual((await cacheFiles(cache)).get(name), ['--version', 'init']);
    const list = await runCli(['task', 'list', '--json'], ws.dir, env());
    assert.deepEqual([list.code, JSON.parse(list.stdout)], [0, []]);
    assert.deepEqual((await cacheFiles(cache)).get(name), ['--version', 'init', 'task']);
  });

  it('a cache file that is not V8 code is ignored and made again; an unwritable folder and RALPH_CODE_CACHE=off change nothing', async () => {
    await runCli(['--version'], ws.dir, env());
    const [name] = [...(await cacheFiles(cache)).keys()];
    await fs.writeFile(path.join(cache, name), '{"verbs":["--version"]}\nnot V8 code at all');
    assert.deepEqual(await runCli(['--version'], ws.dir, env()), { code: 0, stdout: '0.1.0\n', stderr: '' });
    const again = await fs.readFile(path.join(cache, name));
    assert.ok(again.length > 10_000, `made again: ${again.length} bytes`);

    // a file where the folder should be: nothing can be written, the CLI runs as ever
    await fs.rm(cache, { recursive: true });
    await fs.writeFile(cache, 'in the way');
    assert.deepEqual(await runCli(['--version'], ws.dir, env()), { code: 0, stdout: '0.1.0\n', stderr: '' });
    assert.equal(await fs.readFile(cache, 'utf8'), 'in the way');
    await fs.rm(cache);

    const off = await runCli(['--version'], ws.dir, { ...CLI_ENV, RALPH_CODE_CACHE: 'off', XDG_CACHE_HOME: cache });
    assert.deepEqual(off, { code: 0, stdout: '0.1.0\n', stderr: '' });
    await assert.rejects(fs.stat(cache));
  });

  it('where it lives: RALPH_CODE_CACHE (off, or a folder), else the platform cache folder', () => {
    const home = path.join(os.tmpdir(), 'home');
    for (const off of ['off', '0', 'false', 'NO']) assert.equal(codeCacheDir({ RALPH_CODE_CACHE: off }, 'linux', home), undefined);
    assert.equal(codeCacheDir({ RALPH_CODE_CACHE: '/var/cache/r' }, 'linux', home), '/var/cache/r');
    assert.equal(codeCacheDir({}, 'linux', home), path.join(home, '.cache', 'ralph-loop', 'code-cache'));
    assert.equal(codeCacheDir({ XDG_CACHE_HOME: '/x' }, 'linux', home), path.join('/x', 'ralph-loop', 'code-cache'));
    assert.equal(codeCacheDir({ LOCALAPPDATA: 'C:\\L' }, 'win32', home), path.join('C:\\L', 'ralph-loop', 'code-cache'));
    assert.equal(codeCacheDir({}, 'darwin', home), path.join(home, 'Library', 'Caches', 'ralph-loop', 'code-cache'));
    assert.deepEqual(
      [verbFamily(['task', 'add', 'x']), verbFamily(['--workspace', 'w', 'run']), verbFamily(['--version']), verbFamily([])],
      ['task', 'w', '--version', ''],
    );
  });
});

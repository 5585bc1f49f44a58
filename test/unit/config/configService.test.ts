import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { ConfigService } from '../../../src/core/config/service';
import { ConfigError } from '../../../src/core/errors';
import { RalphPaths } from '../../../src/core/paths';
import { openRalph } from '../../../src/core/ralph';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('ConfigService (.ralph/config.json)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ files: { '.ralph/config.json': JSON.stringify({ loop: { maxIterations: 7 } }) } });
  });
  afterEach(async () => ws.cleanup());

  it("is the one instance of the workspace's façade, loads, sees an edit on the next load and tells its listeners", async () => {
    const ralph = openRalph(ws.dir);
    const service = ralph.config;
    assert.equal((await service.load()).loop.maxIterations, 7);
    const seen: number[] = [];
    const sub = service.onDidChange((config) => seen.push(config.loop.maxIterations));
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ loop: { maxIterations: 9 } }));
    assert.equal((await service.reload()).loop.maxIterations, 9);
    assert.ok(seen.includes(9));
    sub.dispose();
  });

  it('tells its listeners once per real change; a malformed edit rejects, tells nobody and keeps the last good config', async () => {
    const service = new ConfigService(new RalphPaths(ws.dir));
    const current = () => service.current;
    assert.equal(current(), undefined);
    assert.equal((await service.load()).loop.maxIterations, 7);
    const seen: number[] = [];
    const sub = service.onDidChange((config) => seen.push(config.loop.maxIterations));
    // only the spacing changes: the validated config is the same
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ loop: { maxIterations: 7 } }, null, 2));
    await service.reload();
    assert.deepEqual(seen, []);
    await fs.writeFile(ws.path('.ralph/config.json'), '{ "loop": { "maxIterations": 8 ');
    await assert.rejects(service.reload(), ConfigError);
    assert.equal(current()?.loop.maxIterations, 7);
    assert.deepEqual(seen, []);
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ loop: { maxIterations: 8 } }));
    assert.equal((await service.reload()).loop.maxIterations, 8);
    await service.load();
    assert.deepEqual(seen, [8]);
    assert.equal(current()?.loop.maxIterations, 8);
    sub.dispose();
  });

  it('rejects a misspelt key with the closest known one, and keeps nothing half-loaded', async () => {
    const service = new ConfigService(new RalphPaths(ws.dir));
    await fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({ llm: { model: ['x'] }, gates: [{ name: 'g', command: 'true', kind: 'tests', requried: true }] }),
    );
    await assert.rejects(service.reload(), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /llm\.model: unknown key; did you mean llm\.models\?/);
      assert.match(error.message, /gates\.0\.requried: unknown key; did you mean gates\.0\.required\?/);
      return true;
    });
  });
});

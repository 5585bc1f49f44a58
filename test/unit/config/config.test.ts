import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { configJsonSchema, tasksJsonSchema } from '../../../src/core/config/jsonSchema';
import { parseConfig } from '../../../src/core/config/load';
import { loadConfig } from '../../../src/core/config/service';
import { ConfigError } from '../../../src/core/errors';
import { RalphPaths } from '../../../src/core/paths';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const repoRoot = path.resolve(__dirname, '../../../..');

describe('config (.ralph/config.json)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await makeTempWorkspace()));
  afterEach(async () => ws.cleanup());

  it('fills every default when the file is missing', async () => {
    const config = await loadConfig(new RalphPaths(ws.dir));
    assert.equal(config.llm.apiKeyEnv, 'OPENAI_API_KEY');
    assert.equal(config.loop.maxIterations, 50);
    assert.equal(config.loop.taskTimeoutMinutes, 30);
    assert.equal(config.llm.compactAt, 0.8);
    assert.equal(config.escalation.threshold, 2);
    assert.equal(config.safeguards.errorThreshold, 3);
    assert.deepEqual(config.gates, []);
  });

  it('keeps given keys and defaults the rest of their section', () => {
    const config = parseConfig({ llm: { baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3'] }, loop: { maxIterations: 7 } });
    assert.deepEqual(config.llm.models, ['llama3']);
    assert.equal(config.llm.apiKeyEnv, 'OPENAI_API_KEY');
    assert.equal(config.loop.maxIterations, 7);
    assert.equal(config.loop.mode, 'autopilot');
  });

  it('names the file, each bad key and what was expected', async () => {
    await ws.write('.ralph/config.json', JSON.stringify({ llm: { models: 'gpt' }, loop: { maxIterations: -1 }, gates: [{ name: 'x' }] }));
    await assert.rejects(loadConfig(new RalphPaths(ws.dir)), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.file, '.ralph/config.json');
      assert.match(error.message, /^\.ralph\/config\.json is invalid/);
      assert.match(error.message, /llm\.models: .*expected array/);
      assert.match(error.message, /loop\.maxIterations: .*>0|loop\.maxIterations: .*positive|loop\.maxIterations: Too small/);
      assert.match(error.message, /gates\.0\.command/);
      return true;
    });
  });

  it('points at the line of broken JSON', async () => {
    await ws.write('.ralph/config.json', '{\n  "llm": {\n    "models": ["a",]\n  }\n}\n');
    await assert.rejects(loadConfig(new RalphPaths(ws.dir)), /config\.json: invalid JSON at line 3/);
  });

  it('ships JSON schemas that match the zod schemas (run `npm run build` after changing them)', () => {
    const shipped = (name: string) => JSON.parse(readFileSync(path.join(repoRoot, 'schemas', name), 'utf8'));
    assert.deepEqual(shipped('config.schema.json'), JSON.parse(JSON.stringify(configJsonSchema())));
    assert.deepEqual(shipped('tasks.schema.json'), JSON.parse(JSON.stringify(tasksJsonSchema())));
    const properties = (configJsonSchema() as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(Object.keys(properties).sort(), [
      '$schema',
      'agent',
      'agents',
      'budget',
      'commands',
      'escalation',
      'forge',
      'gates',
      'llm',
      'loop',
      'merge',
      'proof',
      'reports',
      'safeguards',
      'worktrees',
    ]);
  });
});

import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { detectGates } from '../../../src/core/gates/detect';

/**
 * Gate detection and JUnit reports (issue 47): a runner Ralph does not read from its console but
 * which writes JUnit XML with a flag of its own gets the flag on the gate's command line and the
 * file as its `report`; runners Ralph reads stay as they are, and the test script is never changed.
 */
describe('gate detection: JUnit reports for runners whose console is not read', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-detect-'));
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));
  const project = async (files: Record<string, string>) => {
    for (const [file, content] of Object.entries(files)) await fs.writeFile(path.join(dir, file), content);
    return (await detectGates(dir)).filter((g) => g.kind === 'tests');
  };
  const pkg = (test: string) => ({ 'package.json': JSON.stringify({ scripts: { test } }) });

  it('bun test alone: its JUnit flag after `npm test --`, the file as the report', async () => {
    assert.deepEqual(await project(pkg('bun test')), [
      {
        name: 'tests',
        command: 'npm test -- --reporter=junit --reporter-outfile=.ralph/reports/junit/tests.xml',
        kind: 'tests',
        required: true,
        report: { junit: '.ralph/reports/junit/tests.xml' },
      },
    ]);
  });

  it('a runner Ralph reads, or a script of several commands: `npm test` as it is, no report', async () => {
    for (const script of ['jest', 'vitest run', 'node --test', 'bun test && node after.js', 'mocha']) {
      const [g] = await project(pkg(script));
      assert.deepEqual(g, { name: 'tests', command: 'npm test', kind: 'tests', required: true }, script);
    }
  });

  it('deno: `deno test` with its --junit-path, the file as the report', async () => {
    assert.deepEqual(await project({ 'deno.json': '{}' }), [
      {
        name: 'tests (deno)',
        command: 'deno test --junit-path=.ralph/reports/junit/tests-deno.xml',
        kind: 'tests',
        required: true,
        report: { junit: '.ralph/reports/junit/tests-deno.xml' },
      },
    ]);
  });
});

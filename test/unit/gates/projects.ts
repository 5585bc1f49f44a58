import { promises as fs } from 'node:fs';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { type Toolchain, useToolchain } from './toolchain';

/**
 * Tiny projects the real tools run on. Every test suite has the same shape, so every runner
 * must report 2 passed, 1 failed (`subtracts`, 3 - 1 expected to be 1), 1 skipped.
 */
export const EXPECTED = { passed: 2, failed: 1, skipped: 1, total: 4 } as const;

const calc = 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\nexports.sub = (a, b) => a - b;\n';

export const MOCHA_PROJECT: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'm', private: true, scripts: { test: 'mocha' } }),
  'calc.js': calc,
  'test/calc.test.js': `const assert = require('node:assert');
const calc = require('../calc');
describe('calc', () => {
  it('adds', () => assert.strictEqual(calc.add(1, 2), 3));
  it('multiplies', () => assert.strictEqual(calc.mul(2, 3), 6));
  it('subtracts', () => assert.strictEqual(calc.sub(3, 1), 1, 'subtraction is off'));
  it.skip('divides', () => {});
});
`,
};

export const JEST_PROJECT: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'j', private: true, scripts: { test: 'jest' } }),
  'calc.js': calc,
  'calc.test.js': `const calc = require('./calc');
describe('calc', () => {
  test('subtracts', () => expect(calc.sub(3, 1)).toBe(1));
  test.skip('divides', () => {});
});
`,
  'more.test.js': `const calc = require('./calc');
test('adds', () => expect(calc.add(1, 2)).toBe(3));
test('multiplies', () => expect(calc.mul(2, 3)).toBe(6));
`,
};

export const VITEST_PROJECT: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'v', private: true, type: 'module', scripts: { test: 'vitest run' } }),
  'calc.test.js': `import { describe, test, expect } from 'vitest';
const sub = (a, b) => a - b;
describe('calc', () => {
  test('adds', () => expect(1 + 2).toBe(3));
  test('subtracts', () => expect(sub(3, 1)).toBe(1));
  test.skip('divides', () => {});
});
`,
  'more.test.js': `import { test, expect } from 'vitest';
test('multiplies', () => expect(2 * 3).toBe(6));
`,
};

export const NODE_TEST_PROJECT: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'n', private: true, scripts: { test: 'node --test' } }),
  'calc.js': calc,
  'calc.test.js': `const { describe, it } = require('node:test');
const assert = require('node:assert');
const calc = require('./calc');
describe('calc', () => {
  it('adds', () => assert.strictEqual(calc.add(1, 2), 3));
  it('multiplies', () => assert.strictEqual(calc.mul(2, 3), 6));
  it('subtracts', () => assert.strictEqual(calc.sub(3, 1), 1, 'subtraction is off'));
  it('divides', { skip: true }, () => {});
});
`,
};

/** A temp project with `node_modules` linked to the cached tools (what `require('vitest')` needs). */
export async function makeProject(tools: Toolchain, files: Record<string, string>): Promise<TempWorkspace> {
  const project = await makeTempWorkspace({ prefix: 'ralph-gate-', files });
  await fs.symlink(tools.nodeModules, project.path('node_modules'), 'junction');
  return project;
}

/**
 * Mocha hooks for a suite that runs the real tools: the toolchain is installed (or reused)
 * before the suite, and every project made with `project()` is removed after it.
 */
export function useToolProjects(): { tools(): Toolchain; project(files: Record<string, string>): Promise<TempWorkspace> } {
  const ready = useToolchain();
  const projects: TempWorkspace[] = [];
  after(async () => {
    for (const p of projects.splice(0)) await p.cleanup();
  });
  return {
    tools: ready,
    async project(files) {
      const p = await makeProject(ready(), files);
      projects.push(p);
      return p;
    },
  };
}

import { promises as fs } from 'node:fs';
import type { RalphConfigInput } from '../../../src/core/config/schema';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, type LoopHarness, makeLoopHarness, requestText } from './loopHarness';

/**
 * Projects shaped like real repositories for the verdict tests: a suite with a red test that
 * has nothing to do with the task, a flaky one, dependencies installed (linked) and untracked,
 * a runner that names no tests. Committed as the task's base.
 */
export interface ProjectOptions {
  files: Record<string, string>;
  /** Untracked links at the workspace's top (installed dependencies), ignored by git. */
  links?: Record<string, string>;
  config?: RalphConfigInput;
}

export async function projectHarness(steps: Step[], options: ProjectOptions): Promise<LoopHarness> {
  const h = await makeLoopHarness(steps);
  for (const [file, content] of Object.entries(options.files)) await h.ws.write(file, content);
  for (const [link, target] of Object.entries(options.links ?? {})) await fs.symlink(target, h.ws.path(link), 'junction');
  if (options.links) await h.ws.write('.gitignore', `${Object.keys(options.links).join('\n')}\n`);
  h.ws.git('add', '-A');
  h.ws.git('commit', '-qm', 'the project as the task finds it');
  await h.configure({ ...options.config, loop: { maxIterations: 2, ...options.config?.loop } });
  return h;
}

export const writeStep = (path: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });
export const completeStep = (summary = 'done', evidence = 'the tests pass; the failure of `release date` was there before'): Step => ({
  toolCalls: [{ name: 'ralph_complete', arguments: { summary, promiseEvidence: evidence } }],
});

/** The text of the first request of the iteration that follows `callsBefore` model calls. */
export function requestAfter(h: LoopHarness, callsBefore: number): string {
  return requestText(chatRequests(h.server)[callsBefore]);
}

/** node:test project: slugs (the task's subject) and a release-date test that went red when the date passed. */
export const SLUG_JS = "exports.slug = (text) => text.toLowerCase().replace(/ /g, '-');\n";
export const SLUG_FIXED_JS = "exports.slug = (text) => text.toLowerCase().trim().replace(/\\s+/g, '-');\n";
export const SLUG_TEST = `const test = require('node:test');
const assert = require('node:assert/strict');
const { slug } = require('../src/slug');

test('lowercases', () => assert.equal(slug('Hello'), 'hello'));
test('joins words with a dash', () => assert.equal(slug('a b'), 'a-b'));
`;
export const RELEASE_TEST = `const test = require('node:test');
const assert = require('node:assert/strict');

// written when the release was still ahead; nobody fixed it since
test('release date is in the future', () => assert.ok(new Date('2020-01-01') > new Date(), 'the release date has passed'));
`;
export const SLUG_PROJECT: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'slugs', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/slug.js': SLUG_JS,
  'test/slug.test.js': SLUG_TEST,
  'test/release.test.js': RELEASE_TEST,
};
export const SLUG_TASK = {
  title: 'Collapse spaces in slugs',
  prompt: "slug('a  b') must be 'a-b' (runs of spaces become one dash).",
  promise: 'npm test shows the new behaviour tested and passing',
};
export const TESTS_GATE = { name: 'tests', command: 'npm test', kind: 'tests' as const, required: true };

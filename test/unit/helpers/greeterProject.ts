import { promises as fs } from 'node:fs';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, type LoopHarness, makeLoopHarness, requestText } from './loopHarness';

/**
 * The greeter project of the gate-integrity tests: `add` returns `a - b`, so one of its two
 * node:test tests fails at the task's base. Agents scripted against it either fix the bug or
 * cheat (weaken the gate) and claim COMPLETE.
 */
export const GREETER_JS = 'exports.greet = (name) => `Hello, ${name}!`;\nexports.add = (a, b) => a - b;\n';
export const GREETER_FIXED_JS = 'exports.greet = (name) => `Hello, ${name}!`;\nexports.add = (a, b) => a + b;\n';
export const GREETER_TEST = `const test = require('node:test');
const assert = require('node:assert/strict');
const { greet, add } = require('./greeter');

test('greets by name', () => {
  assert.equal(greet('Ada'), 'Hello, Ada!');
});

test('adds two numbers', () => {
  assert.equal(add(2, 3), 5);
});
`;
export const packageJson = (test: string) => `${JSON.stringify({ name: 'greeter', private: true, scripts: { test } }, null, 2)}\n`;

export const TESTS_GATE = { name: 'tests', command: 'npm test', kind: 'tests' as const, required: true };

export const write = (path: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });
export const complete = (summary = 'all tests pass'): Step => ({
  toolCalls: [{ name: 'ralph_complete', arguments: { summary, promiseEvidence: 'npm test passes' } }],
});

/**
 * A harness on the greeter project (committed: the task's base), gated by `npm test`, with
 * at most `maxIterations` iterations and `steps` as the agent.
 */
export async function greeterHarness(
  steps: Step[],
  options: {
    maxIterations?: number;
    files?: Record<string, string>;
    gates?: object[];
    links?: Record<string, string>;
    maxParallel?: number;
  } = {},
): Promise<LoopHarness> {
  const h = await makeLoopHarness(steps);
  const files = { 'package.json': packageJson('node --test'), 'greeter.js': GREETER_JS, 'greeter.test.js': GREETER_TEST, ...options.files };
  for (const [file, content] of Object.entries(files)) await h.ws.write(file, content);
  // untracked links at the top of the workspace (installed dependencies), as `worktrees.link` expects them
  for (const [link, target] of Object.entries(options.links ?? {})) await fs.symlink(target, h.ws.path(link), 'junction');
  h.ws.git('add', '-A');
  h.ws.git('commit', '-qm', 'greeter: add subtracts');
  await h.configure({
    loop: { maxIterations: options.maxIterations ?? 2, ...(options.maxParallel ? { maxParallel: options.maxParallel } : {}) },
    gates: (options.gates ?? [TESTS_GATE]) as never,
  });
  return h;
}

/**
 * A cheat in iteration 1 (its writes, then COMPLETE), and COMPLETE again in iteration 2
 * without undoing it: the text of iteration 2's first request, the one carrying the feedback.
 */
export function cheatThenInsist(...writes: Step[]): Step[] {
  return [...writes, complete('fixed'), complete('really fixed')];
}

/** The text of the first request of iteration 2 (after `firstIterationCalls` calls in iteration 1). */
export function secondIterationRequest(h: LoopHarness, firstIterationCalls: number): string {
  const requests = chatRequests(h.server);
  return requestText(requests[firstIterationCalls]);
}

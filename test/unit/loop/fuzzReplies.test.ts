import assert from 'node:assert/strict';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { TASK_STATUSES } from '../../../src/core/tasks/schema';
import type { Step } from '../../fixtures/scriptedServer';
import { type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

/** mulberry32: a small seeded generator, so a failure replays exactly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 0x5eed14;
const RUNS = 6;
const TOOL_NAMES = [
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'search',
  'run_command',
  'git_commit',
  'ralph_complete',
  'report_progress',
  'report_blocked',
  'ask_for_help',
  'nope',
  '',
  'read_file\u0000',
  '../../etc',
];
const SIGNALS = [
  '<ralph>COMPLETE</ralph>',
  '<ralph>PROGRESS:50</ralph>',
  '<ralph>PROGRESS:-7</ralph>',
  '<ralph>BLOCKED:</ralph>',
  '<ralph>NEEDS_HELP:x</ralph>',
  '<ralph>',
  '</ralph><ralph>COMPLETE',
];

function fuzzer(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const int = (max: number) => Math.floor(random() * max);
  const str = (): string =>
    pick([
      () => 'x'.repeat(int(50)),
      () => 'y'.repeat(200_000 + int(100_000)),
      () => '\u0000\u0001\uFFFF\uD800 broken surrogate',
      () => '../'.repeat(int(2000)) + 'etc/passwd',
      () => '^(a+)+$',
      () => '*'.repeat(int(60)),
      () => pick(SIGNALS),
      () => 'README.md',
    ])();
  const value = (depth: number): unknown =>
    pick([
      () => str(),
      () => int(1e9) - 5e8,
      () => random() < 0.5,
      () => null,
      () => (depth > 3 ? [] : Array.from({ length: int(4) }, () => value(depth + 1))),
      () =>
        depth > 3
          ? {}
          : Object.fromEntries(
              Array.from({ length: int(4) }, (_, i) => [
                pick(['path', 'content', 'query', 'regex', 'pattern', 'command', 'summary', `k${i}`]),
                value(depth + 1),
              ]),
            ),
    ])();
  const args = (): Record<string, unknown> | string =>
    pick<() => Record<string, unknown> | string>([
      () => value(0) as Record<string, unknown>,
      () => ({ path: str(), content: str(), query: str(), regex: random() < 0.5, pattern: str() }),
      () => '{"path": "README.md"',
      () => 'not json at all \u0000',
      () => JSON.stringify(value(0)),
      () => '',
    ])();
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'f',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const rawPiece = (): unknown =>
    pick([
      () =>
        chunk({
          tool_calls: [
            {
              index: pick([0, 1, -1, 4294967294, 1.5, 'x', null]),
              id: pick(['a', 7, null, {}]),
              function: {
                name: pick<unknown>([pick(TOOL_NAMES), 5, {}, [], null]),
                arguments: pick<unknown>([JSON.stringify(value(0)), 3, {}, null]),
              },
            },
          ],
        }),
      () => chunk({ content: pick<unknown>([str(), 12, {}, null]) }),
      () => chunk({ tool_calls: pick<unknown>(['x', {}, [null], [7]]) }),
      () => ({ choices: pick<unknown>([null, 'x', [null], [{ delta: 'x' }]]) }),
      () => ({
        choices: [],
        usage: pick<unknown>([
          { prompt_tokens: '12' },
          { completion_tokens: 1e300 },
          { total_tokens: -5 },
          'lots',
          { prompt_tokens: NaN },
          { prompt_tokens: 10, completion_tokens: 5 },
        ]),
      }),
      () => '{"broken":',
    ])();
  const step = (): Step =>
    pick<() => Step>([
      () => ({
        content: `${str().slice(0, 500)} ${pick(SIGNALS)}`,
        toolCalls: Array.from({ length: int(4) }, () => ({ name: pick(TOOL_NAMES), arguments: args() })),
        usage: { prompt_tokens: 10, completion_tokens: 10 },
      }),
      () => ({
        toolCalls: Array.from({ length: 20 + int(80) }, () => ({ name: pick(TOOL_NAMES), arguments: args() })),
        usage: { prompt_tokens: 10, completion_tokens: 10 },
      }),
      () => ({
        fault: 'raw-chunks',
        chunks: [...Array.from({ length: 1 + int(6) }, rawPiece), chunk({}, pick(['tool_calls', 'stop', 'length']))],
      }),
      () => ({ content: pick(SIGNALS), usage: { prompt_tokens: 10, completion_tokens: 10 } }),
    ])();
  return { step, int };
}

describe('fuzzed model replies (fixed seed, real loop, scripted server)', function () {
  this.timeout(120_000);
  let h: LoopHarness | undefined;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  before(() => process.on('unhandledRejection', onRejection));
  after(() => process.off('unhandledRejection', onRejection));
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  const random = rng(SEED);
  const f = fuzzer(random);
  for (let run = 0; run < RUNS; run++) {
    const steps = Array.from({ length: 3 + f.int(4) }, f.step);
    it(`run ${run + 1} (seed ${SEED.toString(16)}) ends with a valid status and a valid store and checkpoint`, async () => {
      h = await makeLoopHarness(steps);
      await h.configure({ loop: { maxIterations: 3, taskTimeoutMinutes: 0.25 }, llm: { maxRetries: 0 } as never });
      const id = await h.addTask();
      const summary = await h.runner().run();

      assert.equal(summary.results.length, 1);
      assert.ok((TASK_STATUSES as readonly string[]).includes(summary.results[0].status), summary.results[0].status);
      const task = await h.store.get(id); // the store parses: still valid
      assert.ok((TASK_STATUSES as readonly string[]).includes(task.status));
      assert.notEqual(task.status, 'in_progress', 'the run left the task in a final or resumable state');
      const checkpoint = await new CheckpointStore(h.paths).load(id); // throws on a corrupt checkpoint
      if (checkpoint) assert.ok(Number.isFinite(checkpoint.usage.totalTokens) && checkpoint.usage.totalTokens >= 0);
      assert.deepEqual(rejections, [], 'no unhandled rejection');
    });
  }
});

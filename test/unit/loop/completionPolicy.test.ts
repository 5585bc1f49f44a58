import assert from 'node:assert/strict';
import type { GateConfig } from '../../../src/core/config/schema';
import { detectGates } from '../../../src/core/gates/detect';
import { evaluateGate, summarizeGates } from '../../../src/core/gates/evaluate';
import type { GateOutcome, GateRunResult } from '../../../src/core/gates/types';
import { decideCompletion } from '../../../src/core/loop/task/completionPolicy';
import type { Signal } from '../../../src/core/signals/types';
import { makeTempWorkspace } from '../helpers/tempWorkspace';

const run = (exitCode: number, output = ''): GateRunResult => ({ exitCode, timedOut: false, aborted: false, output, durationMs: 5 });
const gate = (fields: Partial<GateConfig> = {}): GateConfig => ({
  name: 'tests',
  command: 'npm test',
  kind: 'tests',
  required: true,
  ...fields,
});
const outcome = (passed: boolean, fields: Partial<GateConfig> = {}): GateOutcome =>
  evaluateGate(
    gate(fields),
    run(passed ? 0 : 1),
    passed
      ? { tests: { passed: 2, failed: 0, skipped: 0, total: 2, failures: [] } }
      : { tests: { passed: 1, failed: 1, skipped: 0, total: 2, failures: [{ name: 'adds numbers', message: 'expected 3, got 4' }] } },
  );

const decide = (signal: Signal | undefined, outcomes: GateOutcome[] | undefined, left = 0) =>
  decideCompletion({ signal, errored: false, gates: outcomes && summarizeGates(outcomes), optionalIterationsLeft: () => left });

describe('completion policy (signal AND gates)', () => {
  const COMPLETE: Signal = { kind: 'COMPLETE', summary: 'all done' };

  it('holds the table of the quality-gates issue row by row', () => {
    assert.deepEqual(decide(COMPLETE, [outcome(true)]), { kind: 'finish', status: 'done', reason: 'all done', notes: [] });
    const failed = decide(COMPLETE, [outcome(false)]);
    assert.equal(failed.kind, 'continue');
    assert.ok(failed.kind === 'continue' && failed.feedback.some((f) => /failing test: adds numbers\n\s+expected 3, got 4/.test(f)));
    const silentPass = decide(undefined, [outcome(true)]);
    assert.ok(silentPass.kind === 'continue' && /without a completion signal/.test(silentPass.feedback[0]));
    assert.equal(decide(undefined, [outcome(false)]).kind, 'continue');
    assert.deepEqual(decide({ kind: 'BLOCKED', reason: 'r' }, [outcome(false)]), {
      kind: 'finish',
      status: 'blocked',
      reason: 'r',
      notes: [],
    });
    assert.deepEqual(decide({ kind: 'NEEDS_HELP', question: 'q' }, undefined), {
      kind: 'finish',
      status: 'needs_help',
      reason: 'q',
      notes: [],
    });
    assert.equal(decide(COMPLETE, undefined).kind, 'finish', 'no gates configured: COMPLETE is enough');
  });

  it('lets optional gates delay COMPLETE only while they have iterations left', () => {
    const optionalFail = outcome(false, { name: 'coverage', required: false });
    const delayed = decide(COMPLETE, [outcome(true), optionalFail], 1);
    assert.ok(delayed.kind === 'continue' && delayed.optionalGatesRetried[0] === 'coverage');
    const accepted = decide(COMPLETE, [outcome(true), optionalFail], 0);
    assert.ok(accepted.kind === 'finish' && accepted.status === 'done' && /coverage still fails/.test(accepted.notes[0]));
  });

  it('halts on a critical security finding whatever the signal', () => {
    const security = evaluateGate(gate({ name: 'audit', kind: 'security' }), run(1), {
      security: { findings: [{ severity: 'critical', title: 'prototype pollution', package: 'minimist' }] },
    });
    const decision = decide(COMPLETE, [outcome(true), security]);
    assert.ok(decision.kind === 'finish' && decision.status === 'halted' && /prototype pollution/.test(decision.reason));
  });
});

describe('gate evaluation', () => {
  it('fails a test gate whose runner exits 0 while counting failures, and one that exits non-zero without counts', () => {
    const lying = evaluateGate(gate(), run(0), { tests: { passed: 3, failed: 1, skipped: 0, total: 4, failures: [{ name: 't' }] } });
    assert.equal(lying.passed, false);
    assert.equal(lying.summary, '3/4 tests passing, 1 failing');
    const crashed = evaluateGate(gate(), run(2, 'Error: Cannot find module x'), {});
    assert.equal(crashed.passed, false);
    assert.match(crashed.fixItems[0].text, /Cannot find module x/);
  });

  it('grades security findings: high fails the gate, medium is a fix item, low an observation', () => {
    const findings = (severity: 'high' | 'medium' | 'low') =>
      evaluateGate(gate({ kind: 'security' }), run(0), { security: { findings: [{ severity, title: 'x' }] } });
    assert.equal(findings('high').passed, false);
    assert.equal(findings('medium').passed, true);
    assert.equal(findings('medium').fixItems[0].level, 'warning');
    assert.equal(findings('low').fixItems[0].level, 'observation');
    assert.equal(summarizeGates([findings('high')]).high, true);
  });

  it('compares coverage with the threshold (80 by default)', () => {
    const cov = (percent: number, threshold?: number) =>
      evaluateGate(gate({ kind: 'coverage', threshold }), run(0), { coverage: { percent, source: 'summary' } });
    assert.equal(cov(79.5).passed, false);
    assert.equal(cov(80).passed, true);
    assert.equal(cov(60, 50).passed, true);
  });

  it('fails a timed-out gate', () => {
    const timedOut = evaluateGate(gate(), { exitCode: null, timedOut: true, aborted: false, output: '', durationMs: 61000 }, {});
    assert.equal(timedOut.passed, false);
    assert.match(timedOut.summary, /timed out/);
  });
});

describe('default gate detection', () => {
  it('finds npm test, tsc and eslint in a Node project, and pytest/go/cargo by their files', async () => {
    const ws = await makeTempWorkspace({
      files: {
        'package.json': JSON.stringify({ scripts: { test: 'mocha' }, devDependencies: { typescript: '5', eslint: '9' } }),
        'tsconfig.json': '{}',
        'eslint.config.js': 'module.exports = [];',
        'go.mod': 'module x',
        'pyproject.toml': '',
      },
    });
    try {
      const gates = await detectGates(ws.dir);
      assert.deepEqual(
        gates.map((g) => [g.command, g.kind]),
        [
          ['npm test', 'tests'],
          ['npx tsc --noEmit', 'types'],
          ['npx eslint .', 'lint'],
          ['python3 -m pytest -q', 'tests'],
          ['go test ./...', 'tests'],
        ],
      );
    } finally {
      await ws.cleanup();
    }
  });

  it("ignores npm's placeholder test script", async () => {
    const ws = await makeTempWorkspace({
      files: { 'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }) },
    });
    try {
      assert.deepEqual(await detectGates(ws.dir), []);
    } finally {
      await ws.cleanup();
    }
  });
});

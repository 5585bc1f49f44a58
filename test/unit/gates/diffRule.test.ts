import assert from 'node:assert/strict';
import { diffRuleApplies, diffRuleJudgement, diffRuleSummary, gateRunsFile } from '../../../src/core/gates/diffRule';
import type { TestCodeFinding } from '../../../src/core/gates/testCodeChanges';

/** Where the diff rule applies, which files it reads, what it says (issue 47). */
describe('the diff rule in a verdict', () => {
  const finding: TestCodeFinding = {
    file: 'test/index.js',
    what: 'removed',
    tests: ['scalars > objects'],
    text: 'test `scalars > objects` in `test/index.js` is gone — restore it',
  };

  it('judges a required tests gate whose output gave no counts at the base, and no other', () => {
    assert.equal(diffRuleApplies({ kind: 'tests', required: true }, {}), true);
    assert.equal(diffRuleApplies({ kind: 'tests', required: true }, { tests: { total: 3 } }), false);
    assert.equal(diffRuleApplies({ kind: 'tests', required: false }, {}), false);
    assert.equal(diffRuleApplies({ kind: 'lint', required: true }, {}), false);
    assert.equal(diffRuleApplies({ kind: 'tests', required: true }, undefined), false);
  });

  it("reads test files, Rust files and the files the gate's command or scripts name; not the code under test", () => {
    const isTest = (f: string) => /(^|\/)test\//.test(f);
    const gate = { command: 'npm test' };
    const scripts = { test: 'node checks.js && uvu -r esm tests' };
    assert.equal(gateRunsFile('test/index.js', gate, scripts, isTest), true);
    assert.equal(gateRunsFile('checks.js', gate, scripts, isTest), true);
    assert.equal(gateRunsFile('src/lib.rs', gate, scripts, isTest), true);
    assert.equal(gateRunsFile('src/index.js', gate, scripts, isTest), false);
    assert.equal(gateRunsFile('checks.js', { command: 'node ./checks.js' }, {}, isTest), true);
  });

  it('holds every finding; removed tests are `gone` (a person may be asked) only when the suite was green at the base', () => {
    const red = diffRuleJudgement([finding]);
    assert.deepEqual(red, {
      violations: [
        "the gate's output could not be read (no test names or counts), so the task's diff decides: it removes test code — test `scalars > objects` in `test/index.js` is gone — restore it",
      ],
    });
    assert.deepEqual(diffRuleJudgement([finding], true).gone, ['test/index.js: scalars > objects']);
    assert.deepEqual(diffRuleJudgement([{ ...finding, what: 'skipped' }], true).gone, undefined);
    assert.deepEqual(diffRuleJudgement([]), { violations: [] });
  });

  it('the summary says the output was not read, the exit codes, what the diff showed, how to make it readable', () => {
    const outcome = { summary: 'passed (no test counts found in the output)', exitCode: 0, passed: true };
    const base = { passed: false, failing: [], unnamed: 0, counted: false };
    assert.match(
      diffRuleSummary(outcome, base, []),
      /^passed — output not read \(no test names or counts\); red at the task's base, exit code 0 now; judged by the diff rule: the task removes no test code\. To have its tests read/,
    );
    assert.match(diffRuleSummary(outcome, base, [finding]), /the task removes test code in `test\/index\.js`\./);
    // the run passed, the diff did not: the verdict leads, never the run's "passed" (a report not read said after it)
    const held = { ...outcome, passed: false };
    assert.match(
      diffRuleSummary(held, base, [finding]),
      /^not passed: the task removes test code in `test\/index\.js` \(judged by the diff rule: output not read, no test names or counts; red at the task's base, exit code 0 now\)\. To have its tests read/,
    );
    const junit = { ...held, summary: 'passed (JUnit report not read: the run wrote no `reports/junit.xml`)' };
    assert.match(
      diffRuleSummary(junit, base, [finding]),
      /^not passed: the task removes test code in `test\/index\.js` \(judged by the diff rule: output not read, no test names or counts \(JUnit report not read: the run wrote no `reports\/junit\.xml`\); red at the task's base, exit code 0 now\)\./,
    );
    // allowed by the person (still passed), or nothing removed: the run's verdict stands
    assert.match(diffRuleSummary(outcome, base, [finding]), /^passed — output not read/);
    assert.match(
      diffRuleSummary({ ...outcome, summary: 'failed with exit code 1', exitCode: 1 }, undefined, undefined),
      /^failed with exit code 1 — output not read \(no test names or counts\); judged by the diff rule: the task's diff could not be read\./,
    );
  });
});

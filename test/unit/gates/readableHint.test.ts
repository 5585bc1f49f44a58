import assert from 'node:assert/strict';
import { diffRuleSummary } from '../../../src/core/gates/diffRule';
import { READABLE, readableHint } from '../../../src/core/gates/readableHint';

/** What a gate whose output was not read says to make it readable, for the runner its command calls (issue 47). */
describe('readableHint: how to make a gate’s output readable', () => {
  it('names the reporter flag of the runner the command calls', () => {
    const cases: [string, RegExp][] = [
      ['node --test', /node --test: add `--test-reporter=spec`/],
      ['node --experimental-strip-types --test test/', /node --test: add `--test-reporter=spec`/],
      ['npx mocha', /mocha: add `--reporter spec`/],
      ['./node_modules/.bin/jest', /jest: add `--verbose`/],
      ['vitest run', /vitest: add `--reporter=verbose`/],
      ['ava', /ava: add `--verbose`/],
      ['tape test/*.js | tap-spec', /tap\/tape: TAP is read/],
      ['python -m pytest -q', /pytest: add `-v`/],
    ];
    for (const [command, hint] of cases) assert.match(readableHint(command), hint, command);
  });

  it('a runner that writes JUnit XML with a flag: the flag and the gate’s `report`; the general sentence names `report` too', () => {
    const report = /`"report": \{ "junit": "reports\/junit\.xml" \}` to the gate/;
    assert.match(readableHint('bun test'), /bun test: add `--reporter=junit --reporter-outfile=reports\/junit\.xml` to the gate's command/);
    assert.match(readableHint('npm test', { test: 'bun test' }), report);
    assert.match(readableHint('deno test -A'), /deno test: add `--junit-path=reports\/junit\.xml`/);
    assert.match(
      readableHint('npx playwright test'),
      /Playwright: add `--reporter=junit` .* with `PLAYWRIGHT_JUNIT_OUTPUT_FILE=reports\/junit\.xml`/,
    );
    assert.match(readableHint('vendor/bin/phpunit'), /PHPUnit: add `--log-junit reports\/junit\.xml`/);
    assert.match(READABLE, /name the file in the gate's `report`/);
  });

  it('uvu and jasmine are read: the hint says their summary was missing', () => {
    assert.match(readableHint('uvu -r esm test'), /uvu's default reporter is read .*this run printed no summary/);
    assert.match(readableHint('jasmine'), /jasmine's default console reporter is read .*printed no summary/);
  });

  it('follows the package.json scripts the command runs (npm, yarn, pnpm; nested)', () => {
    const scripts = { test: 'npm run lint && npm run unit', unit: 'uvu tests', lint: 'eslint .', spec: 'mocha' };
    assert.match(readableHint('npm test', scripts), /^To have its tests read: uvu's default reporter/);
    assert.match(readableHint('yarn spec', scripts), /mocha: add `--reporter spec`/);
    assert.match(readableHint('pnpm run spec', scripts), /mocha: add `--reporter spec`/);
    const both = readableHint('npm run unit && npm run spec', scripts);
    assert.match(both, /uvu's default reporter .*; mocha: add `--reporter spec` \(see docs\/test-runners\.md\)\.$/);
  });

  it('a runner it cannot tell: the general sentence; a reporter named to a flag is no runner', () => {
    assert.equal(readableHint('node test/checks.js'), READABLE);
    assert.equal(readableHint('npm test', { test: 'node test/checks.js' }), READABLE);
    assert.equal(readableHint('npm test'), READABLE);
    assert.equal(readableHint('cargo test --test integration'), READABLE);
    assert.doesNotMatch(readableHint('mocha --reporter tap'), /tap\/tape/);
  });

  it('ends the diff rule’s summary', () => {
    const outcome = { summary: 'passed (no test counts found in the output)', exitCode: 0, passed: true };
    assert.match(
      diffRuleSummary(outcome, undefined, [], readableHint('jest --silent')),
      /the task removes no test code\. To have its tests read: jest: add `--verbose`/,
    );
    assert.ok(diffRuleSummary(outcome, undefined, []).endsWith(READABLE));
  });
});

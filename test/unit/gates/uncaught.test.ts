import assert from 'node:assert/strict';
import { evaluateGate } from '../../../src/core/gates/evaluate';
import { uncaughtError } from '../../../src/core/gates/parsers/uncaught';
import type { GateConfig } from '../../../src/core/config/schema';

/**
 * A suite whose output is not read (a `node test.js` script of asserts) that fails: the agent is
 * shown the error the process ended with — its message and the first frame outside Node and
 * node_modules — before the output's last lines, which for Node's report of an uncaught error are
 * only the error's fields and Node's own frames. Real outputs of Node 20, paths shortened: the
 * realrepos case node-jsonpointer-027457f at its base, an assertion with a diff, a library that throws.
 */
const INTERNAL = [
  '    at Module._compile (node:internal/modules/cjs/loader:1521:14)',
  '    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)',
  '    at Module.load (node:internal/modules/cjs/loader:1266:32)',
  '    at Module._load (node:internal/modules/cjs/loader:1091:12)',
  '    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)',
  '    at node:internal/main/run_main_module:28:49',
].join('\n');

const JSONPOINTER = `node:internal/assert/utils:281
    throw err;
    ^

AssertionError [ERR_ASSERTION]: should not boo
    at Object.<anonymous> (/work/jp/test.js:141:1)
${INTERNAL} {
  generatedMessage: false,
  code: 'ERR_ASSERTION',
  actual: false,
  expected: true,
  operator: '=='
}

Node.js v20.20.2
`;

const DEEP = `node:assert:90
  throw new AssertionError(obj);
  ^

AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:
+ actual - expected

  {
    a: 1,
    b: [
      1,
+     2
-     3
    ]
  }
    at Object.<anonymous> (/work/un/deep.js:2:8)
${INTERNAL} {
  generatedMessage: true,
  code: 'ERR_ASSERTION',
  operator: 'deepStrictEqual'
}

Node.js v20.20.2
`;

const LIBRARY = `checking
/work/un/lib.js:1
module.exports = (s) => s.trim()
                          ^

TypeError: Cannot read properties of undefined (reading 'trim')
    at module.exports (/work/un/lib.js:1:27)
    at Object.<anonymous> (/work/un/t.js:3:1)
${INTERNAL}

Node.js v20.20.2
`;

describe('the error a process ended with, where its output is not read', () => {
  it('an assert script: the assertion and the line of the script that made it', () => {
    assert.equal(
      uncaughtError(JSONPOINTER),
      'AssertionError [ERR_ASSERTION]: should not boo\n    at Object.<anonymous> (/work/jp/test.js:141:1)',
    );
  });

  it("an assertion's diff is part of its message; a library's error names the library's frame", () => {
    const deep = uncaughtError(DEEP);
    assert.ok(deep?.startsWith('AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n+ actual - expected'), deep);
    assert.ok(deep?.includes('+     2\n-     3'), deep);
    assert.ok(deep?.endsWith('    at Object.<anonymous> (/work/un/deep.js:2:8)'), deep);
    assert.equal(
      uncaughtError(LIBRARY),
      "TypeError: Cannot read properties of undefined (reading 'trim')\n    at module.exports (/work/un/lib.js:1:27)",
    );
  });

  it('nothing without a report of an error and its stack', () => {
    assert.equal(uncaughtError('All tests pass.\n'), undefined);
    assert.equal(uncaughtError('Error: something went wrong\nexit 1\n'), undefined);
  });

  it("the failed gate's item shows the error first, then the output's last lines", () => {
    const gate = { name: 'tests', kind: 'tests', command: 'node test.js', required: true } as GateConfig;
    const outcome = evaluateGate(gate, { exitCode: 1, output: JSONPOINTER, timedOut: false, aborted: false, durationMs: 90 }, {});
    assert.equal(outcome.passed, false);
    assert.equal(outcome.summary, 'failed with exit code 1 (no test counts found in the output)');
    const text = outcome.fixItems[0].text;
    assert.ok(
      text.startsWith(
        "`node test.js` failed (exit code 1), ending with:\n    AssertionError [ERR_ASSERTION]: should not boo\n        at Object.<anonymous> (/work/jp/test.js:141:1)\nThe output's last lines:\n",
      ),
      text,
    );
    assert.ok(text.endsWith('Node.js v20.20.2'), text);
  });
});

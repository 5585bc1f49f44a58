import assert from 'node:assert/strict';
import { useToolchain } from '../gates/toolchain';
import { eventsOf, type LoopHarness } from '../helpers/loopHarness';
import { completeStep, projectHarness, requestAfter, writeStep } from '../helpers/verdictProjects';

/**
 * A small media-type parsing library, as a real fix commit leaves it: the fix's test is in
 * (three assertions on quoted parameters), the fix itself is not yet. The agent's job is the
 * fix; a cheating agent deletes the three assertions instead. Real mocha and jest (installed
 * once in the shared tool cache and linked in as `node_modules`, outside the workspace and, in
 * the sandbox, outside its private /tmp), real git, the scripted model.
 */
const PARSE_JS = `'use strict';
/** Parses a media type: \`text/html; charset=utf-8\` → { type, parameters }. */
exports.parse = function parse(header) {
  const [type, ...rest] = String(header).split(';');
  const parameters = {};
  for (const part of rest) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    parameters[part.slice(0, at).trim().toLowerCase()] = part.slice(at + 1).trim();
  }
  return { type: type.trim().toLowerCase(), parameters };
};
`;
/** The fix: parameters read by a tokenizer that knows quoted strings (a `;` inside quotes, escaped quotes). */
const PARSE_FIXED_JS = String.raw`'use strict';
/** Parses a media type: "text/html; charset=utf-8" → { type, parameters }. */
exports.parse = function parse(header) {
  const text = String(header);
  const semi = text.indexOf(';');
  const type = (semi < 0 ? text : text.slice(0, semi)).trim().toLowerCase();
  const parameters = {};
  const param = /;\s*([^=;\s]+)\s*=\s*("(?:\\.|[^"\\])*"|[^;]*)/g;
  for (let m = param.exec(text); m; m = param.exec(text)) {
    const raw = m[2].trim();
    parameters[m[1].toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  return { type, parameters };
};
`;
const describeTests = (quoted: string) => `'use strict';
const assert = require('node:assert');
const { parse } = require('../lib/mediaType');

describe('parse', () => {
  it('reads the type in lower case', () => {
    assert.strictEqual(parse('Text/HTML').type, 'text/html');
  });
  it('reads parameters', () => {
    assert.deepStrictEqual(parse('text/html; charset=utf-8').parameters, { charset: 'utf-8' });
  });
  it('unquotes quoted parameter values', () => {
${quoted}  });
});
`;
const THREE_ASSERTIONS = `    assert.strictEqual(parse('text/plain; charset="utf-8"').parameters.charset, 'utf-8');
    assert.strictEqual(parse('multipart/mixed; boundary="a;b"').parameters.boundary, 'a;b');
    assert.strictEqual(parse('text/plain; title="say \\\\"hi\\\\""').parameters.title, 'say "hi"');
`;

describe('gate integrity on real runners: a deleted failing assertion is caught under mocha and jest', function () {
  this.timeout(180000);
  const toolchain = useToolchain();
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  for (const runner of ['mocha', 'jest'] as const) {
    const command = runner === 'mocha' ? 'mocha' : 'jest --ci';
    const testFile = runner === 'mocha' ? 'test/mediaType.test.js' : 'test/mediaType.test.js';
    const body = (quoted: string) => (runner === 'mocha' ? describeTests(quoted) : describeTests(quoted).replace(/\bit\(/g, 'test('));
    const project = () => ({
      'package.json': `${JSON.stringify({ name: 'media-type', version: '1.0.0', private: true, scripts: { test: command } }, null, 2)}\n`,
      'lib/mediaType.js': PARSE_JS,
      [testFile]: body(THREE_ASSERTIONS),
      'README.md': '# media-type\n\nParses Content-Type headers.\n',
    });
    const gates = [{ name: 'tests', command: 'npm test', kind: 'tests' as const, required: true }];
    const task = {
      title: 'Unquote parameter values',
      prompt: 'parse() must unquote quoted parameter values (RFC 9110 quoted-string).',
      promise: 'npm test passes',
    };

    it(`${runner}: the three assertions deleted from the failing test → not done, told what was lost`, async () => {
      h = await projectHarness(
        [writeStep(testFile, body('')), completeStep('fixed', 'npm test passes'), completeStep('fixed', 'npm test passes')],
        { files: project(), links: { node_modules: toolchain().nodeModules }, config: { gates } },
      );
      await h.addTask(task);
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'timeout');
      const [first] = eventsOf(h.events, 'gate.finished');
      assert.equal(first.passed, false, JSON.stringify(first));
      assert.match(
        first.integrity?.violations.join('\n') ?? '',
        /failed at the task's base and passes now, but `test\/mediaType\.test\.js`, which defines it, lost lines it had there \(`assert\.strictEqual\(parse\('text\/plain; charset="utf-8"'\)/,
      );
      assert.match(requestAfter(h, 2), /fix the code under test, not the test, and restore those lines/);
    });

    it(`${runner}: nothing fixed, COMPLETE claimed → not done: the failing test is the one the task asks for, not a pre-existing one`, async () => {
      h = await projectHarness([completeStep('nothing to do', 'npm test: the failure was there before')], {
        files: project(),
        links: { node_modules: toolchain().nodeModules },
        config: { gates, loop: { maxIterations: 1 } },
      });
      await h.addTask(task);
      assert.equal((await h.runner().run()).results[0].status, 'timeout');
      const [finished] = eventsOf(h.events, 'gate.finished');
      assert.equal(finished.passed, false);
      assert.equal(finished.preExisting, undefined, 'the task names it ("must unquote quoted parameter values"): its own to fix');
    });

    it(`${runner}: the honest fix → done in one iteration`, async () => {
      h = await projectHarness([writeStep('lib/mediaType.js', PARSE_FIXED_JS), completeStep('unquoted', 'npm test passes')], {
        files: project(),
        links: { node_modules: toolchain().nodeModules },
        config: { gates },
      });
      await h.addTask(task);
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
      assert.equal(eventsOf(h.events, 'gate.finished')[0].passed, true);
    });
  }

  it('mocha names every test at the base: a renamed test (same body, renamed identifiers) is accepted and reported', async () => {
    const before = describeTests(THREE_ASSERTIONS);
    const renamedLib = PARSE_FIXED_JS.replace(/exports\.parse = function parse/, 'exports.parseMediaType = function parseMediaType');
    const renamedTests = before.replace(/\bparse\b/g, 'parseMediaType').replace("'reads parameters'", "'reads the parameters'");
    h = await projectHarness(
      [
        writeStep('lib/mediaType.js', renamedLib),
        writeStep('test/mediaType.test.js', renamedTests),
        completeStep('renamed parse to parseMediaType', 'npm test passes'),
      ],
      {
        files: {
          'package.json': `${JSON.stringify({ name: 'm', private: true, scripts: { test: 'mocha' } })}\n`,
          'lib/mediaType.js': PARSE_FIXED_JS,
          'test/mediaType.test.js': before,
        },
        links: { node_modules: toolchain().nodeModules },
        config: { gates: [{ name: 'tests', command: 'npm test', kind: 'tests', required: true }] },
      },
    );
    const id = await h.addTask({
      title: 'Rename parse to parseMediaType',
      prompt: 'Rename parse() to parseMediaType() everywhere, its tests included.',
      promise: 'npm test passes',
      type: 'refactor',
    });
    const summary = await h.runner().run();
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(summary.results[0].status, 'done', `${summary.results[0].reason} ${JSON.stringify(finished)}`);
    const accepted = (from: string, to: string) =>
      `test \`parse ${from}\` renamed to \`parseMediaType ${to}\` in \`test/mediaType.test.js\` (the same body but for renamed identifiers): accepted`;
    // the suite is renamed with the function (every test's name changes) and one title too
    assert.deepEqual(finished.integrity, {
      violations: [],
      allowed: [
        accepted('reads the type in lower case', 'reads the type in lower case'),
        accepted('reads parameters', 'reads the parameters'),
        accepted('unquotes quoted parameter values', 'unquotes quoted parameter values'),
      ],
    });
    assert.match(
      await h.ws.read(`.ralph/reports/${id}/final.md`),
      /Gate changes the task was allowed to make\*\*\n\n[^#]*- \*\*tests\*\*: test `parse reads parameters` renamed to `parseMediaType reads the parameters`/,
    );
  });
});

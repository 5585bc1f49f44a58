import assert from 'node:assert/strict';
import { testCodeChanges, type TestFileText } from '../../../src/core/gates/testCodeChanges';
import { readTestShape } from '../../../src/core/gates/testShapes';

/** The diff rule's reading of test code (issue 47): what a change removes or disables, across languages' test shapes. */
const change = (file: string, before: string | undefined, after: string | undefined): TestFileText => ({
  file,
  ...(before !== undefined ? { before } : {}),
  ...(after !== undefined ? { after } : {}),
});
const kinds = (changes: TestFileText[]) => testCodeChanges(changes).map((f) => `${f.what} ${f.tests.join(',')}`);

const UVU = `import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fn from '../src';

function same(a, b) {
  assert.is(fn(a, b), true);
}

const scalars = suite('scalars');

scalars('scalars', () => {
  same(1, 1);
  same(NaN, NaN);
});

scalars('objects', () => {
  same({}, {});
});

scalars.run();
`;

const MOCHA = `const assert = require('node:assert');
const { add } = require('../lib/add');

describe('add', () => {
  it('adds two numbers', () => {
    assert.strictEqual(add(2, 3), 5);
  });
  it('adds negatives', function () {
    // the sign is kept
    assert.strictEqual(add(-2, -3), -5);
    assert.strictEqual(add(-2, 3), 1);
  });
});
`;

describe('the diff rule: test code a change removes or disables', () => {
  describe('JS/TS', () => {
    it('reads cases with their suites, uvu suites and helpers that assert', () => {
      const shape = readTestShape('test/index.js', UVU)!;
      assert.deepEqual(
        shape.cases.map((c) => [c.key, c.assertions, c.disabled, c.empty]),
        [
          ['scalars > scalars', 2, false, false],
          ['scalars > objects', 1, false, false],
        ],
      );
      const mocha = readTestShape('test/add.test.js', MOCHA)!;
      assert.deepEqual(
        mocha.cases.map((c) => [c.key, c.assertions]),
        [
          ['add > adds two numbers', 1],
          ['add > adds negatives', 2],
        ],
      );
    });

    it('a test case deleted → removed, named with its suite', () => {
      const after = UVU.replace(/scalars\('objects'[\s\S]*?\n\}\);\n/, '');
      const [finding] = testCodeChanges([change('test/index.js', UVU, after)]);
      assert.equal(finding.what, 'removed');
      assert.deepEqual(finding.tests, ['scalars > objects']);
      assert.match(finding.text, /test `scalars > objects` in `test\/index\.js` is gone .* — restore it/);
    });

    it("the upstream test change reverted (a helper's assertions removed from a test) → assertions lost", () => {
      const after = UVU.replace('  same(NaN, NaN);\n', '');
      assert.deepEqual(kinds([change('test/index.js', UVU, after)]), ['assertions scalars > scalars']);
    });

    it('skip markers, xit, .todo, this.skip() → skipped; .only → focused; an emptied body → emptied', () => {
      const f = 'test/add.test.js';
      assert.deepEqual(kinds([change(f, MOCHA, MOCHA.replace("it('adds two", "it.skip('adds two"))]), ['skipped add > adds two numbers']);
      assert.deepEqual(kinds([change(f, MOCHA, MOCHA.replace("it('adds two", "xit('adds two"))]), ['skipped add > adds two numbers']);
      assert.deepEqual(kinds([change(f, MOCHA, MOCHA.replace("describe('add'", "describe.skip('add'"))]), [
        'skipped add > adds two numbers,add > adds negatives',
      ]);
      assert.deepEqual(kinds([change(f, MOCHA, MOCHA.replace('// the sign is kept', 'this.skip();'))]), ['skipped add > adds negatives']);
      const todo = MOCHA.replace(/it\('adds two numbers', \(\) => \{\n.*\n {2}\}\);/, "test.todo('adds two numbers');");
      assert.deepEqual(kinds([change(f, MOCHA, todo)]), ['skipped add > adds two numbers']);
      assert.deepEqual(kinds([change(f, MOCHA, MOCHA.replace("it('adds negatives'", "it.only('adds negatives'"))]), ['focused ']);
      const emptied = MOCHA.replace('    assert.strictEqual(add(2, 3), 5);\n', '    // TODO\n');
      assert.deepEqual(kinds([change(f, MOCHA, emptied)]), ['emptied add > adds two numbers']);
    });

    it('a whole test file deleted → deleted; moved to another file with the same tests → nothing', () => {
      assert.deepEqual(kinds([change('test/add.test.js', MOCHA, undefined)]), ['deleted add > adds two numbers,add > adds negatives']);
      assert.deepEqual(kinds([change('test/add.test.js', MOCHA, undefined), change('test/sum.test.js', undefined, MOCHA)]), []);
    });

    it('a renamed test (same body, identifiers renamed) and a renamed suite are kept', () => {
      const renamed = MOCHA.replace(/\badd\b/g, 'sum').replace("'adds two numbers'", "'sums two numbers'");
      assert.deepEqual(kinds([change('test/add.test.js', MOCHA, renamed)]), []);
    });

    it('an honest change: tests added, an assertion changed, source files only → nothing', () => {
      const added = MOCHA.replace('});\n});\n', "});\n  it('adds zero', () => {\n    assert.strictEqual(add(0, 1), 1);\n  });\n});\n");
      assert.deepEqual(kinds([change('test/add.test.js', MOCHA, added)]), []);
      assert.deepEqual(kinds([change('test/add.test.js', MOCHA, MOCHA.replace('add(-2, 3), 1', 'add(-2, 3), 1.0'))]), []);
      assert.deepEqual(kinds([change('test/index.js', UVU, UVU.replace('same(1, 1);', 'same(1, 1);\n  same(2, 2);'))]), []);
      assert.deepEqual(kinds([change('lib/add.js', 'exports.add = (a, b) => a - b;\n', 'exports.add = (a, b) => a + b;\n')]), []);
    });

    it('a script of checks (no cases): a check deleted → assertions lost; moved to another file → nothing', () => {
      const script = `const assert = require('node:assert');\nconst { add } = require('../add');\nassert.equal(add(2, 3), 5);\nassert.equal(add(1, 1), 2);\nconsole.log('ok');\n`;
      const lost = testCodeChanges([change('test/checks.js', script, script.replace('assert.equal(add(2, 3), 5);\n', ''))]);
      assert.deepEqual(
        lost.map((f) => f.text),
        ['`test/checks.js` lost 1 assertion outside its tests (`assert.equal(add(2, 3), 5);`) — restore them'],
      );
      const moved = [
        change('test/checks.js', script, script.replace('assert.equal(add(2, 3), 5);\n', '')),
        change('test/more.js', undefined, "const assert = require('node:assert');\nassert.equal(add(2, 3), 5);\n"),
      ];
      assert.deepEqual(kinds(moved), []);
    });
  });

  describe('pytest', () => {
    const PY = `import pytest
from app import add


def test_adds():
    assert add(2, 3) == 5


class TestSigns:
    def test_negatives(self):
        """Signs are kept."""
        assert add(-2, -3) == -5
        assert add(-2, 3) == 1
`;
    it('reads def test_ in modules and classes', () => {
      assert.deepEqual(
        readTestShape('tests/test_add.py', PY)!.cases.map((c) => [c.key, c.assertions]),
        [
          ['test_adds', 1],
          ['TestSigns::test_negatives', 2],
        ],
      );
    });
    it('a test deleted, @pytest.mark.skip added, a body emptied, an assertion removed → found', () => {
      const f = 'tests/test_add.py';
      assert.deepEqual(kinds([change(f, PY, PY.replace(/def test_adds\(\):\n.*\n/, ''))]), ['removed test_adds']);
      assert.deepEqual(kinds([change(f, PY, PY.replace('def test_adds', '@pytest.mark.skip(reason="later")\ndef test_adds'))]), [
        'skipped test_adds',
      ]);
      assert.deepEqual(kinds([change(f, PY, PY.replace('    assert add(2, 3) == 5', '    pass'))]), ['emptied test_adds']);
      assert.deepEqual(kinds([change(f, PY, PY.replace('        assert add(-2, 3) == 1\n', ''))]), [
        'assertions TestSigns::test_negatives',
      ]);
    });
    it('a renamed test with the same body, a new test → nothing', () => {
      const f = 'tests/test_add.py';
      assert.deepEqual(kinds([change(f, PY, PY.replace('def test_adds', 'def test_adds_two'))]), []);
      assert.deepEqual(kinds([change(f, PY, `${PY}\n\ndef test_zero():\n    assert add(0, 0) == 0\n`)]), []);
    });
  });

  describe('Go', () => {
    const GO = `package add

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Errorf("Add(2, 3) = %d", Add(2, 3))
	}
	t.Run("negatives", func(t *testing.T) {
		if Add(-2, -3) != -5 {
			t.Fatal("negatives")
		}
	})
}
`;
    it('reads func TestX and its t.Run subtests', () => {
      assert.deepEqual(
        readTestShape('add_test.go', GO)!.cases.map((c) => [c.key, c.assertions]),
        [
          ['TestAdd', 1],
          ['TestAdd/negatives', 1],
        ],
      );
    });
    it('t.Skip added, a subtest deleted → found; renamed with the same body → nothing', () => {
      assert.deepEqual(kinds([change('add_test.go', GO, GO.replace('\tif Add(2, 3)', '\tt.Skip("flaky")\n\tif Add(2, 3)'))]), [
        'skipped TestAdd',
      ]);
      assert.deepEqual(kinds([change('add_test.go', GO, GO.replace(/\tt\.Run[\s\S]*?\n\t\}\)\n/, ''))]), ['removed TestAdd/negatives']);
      assert.deepEqual(kinds([change('add_test.go', GO, GO.replace('TestAdd(', 'TestAddition('))]), []);
    });
  });

  describe('Rust', () => {
    const RS = `pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn negatives() {
        assert_eq!(add(-2, -3), -5);
    }
}
`;
    it('reads #[test] fns in their module; #[ignore] added, a #[test] removed, a body emptied → found', () => {
      assert.deepEqual(
        readTestShape('src/lib.rs', RS)!.cases.map((c) => c.key),
        ['tests::adds', 'tests::negatives'],
      );
      assert.deepEqual(kinds([change('src/lib.rs', RS, RS.replace('#[test]\n    fn adds', '#[test]\n    #[ignore]\n    fn adds'))]), [
        'skipped tests::adds',
      ]);
      assert.deepEqual(kinds([change('src/lib.rs', RS, RS.replace(/ {4}#\[test\]\n {4}fn negatives[\s\S]*?\n {4}\}\n/, ''))]), [
        'removed tests::negatives',
      ]);
      assert.deepEqual(kinds([change('src/lib.rs', RS, RS.replace('        assert_eq!(add(2, 3), 5);\n', ''))]), ['emptied tests::adds']);
      assert.deepEqual(kinds([change('src/lib.rs', RS, RS.replace('{ a + b }', '{ b + a }'))]), []);
    });
  });

  describe('RSpec and minitest', () => {
    const RB = `require 'add'

RSpec.describe Adder do
  it 'adds two numbers' do
    expect(add(2, 3)).to eq(5)
  end

  context 'with negatives' do
    it 'keeps the sign' do
      expect(add(-2, -3)).to eq(-5)
    end
  end
end
`;
    it('reads it/describe/context; xit, skip, a deleted example → found; a renamed example → nothing', () => {
      assert.deepEqual(
        readTestShape('spec/add_spec.rb', RB)!.cases.map((c) => [c.key, c.assertions]),
        [
          ['Adder adds two numbers', 1],
          ['Adder with negatives keeps the sign', 1],
        ],
      );
      const f = 'spec/add_spec.rb';
      assert.deepEqual(kinds([change(f, RB, RB.replace("  it 'adds", "  xit 'adds"))]), ['skipped Adder adds two numbers']);
      assert.deepEqual(kinds([change(f, RB, RB.replace('      expect(add(-2, -3)).to eq(-5)\n', "      skip 'later'\n"))]), [
        'skipped Adder with negatives keeps the sign',
      ]);
      assert.deepEqual(kinds([change(f, RB, RB.replace(/ {2}it 'adds two numbers' do\n.*\n {2}end\n\n/, ''))]), [
        'removed Adder adds two numbers',
      ]);
      assert.deepEqual(kinds([change(f, RB, RB.replace("'adds two numbers'", "'sums two numbers'"))]), []);
    });
    it('minitest: def test_ removed → found', () => {
      const MT = `class AddTest < Minitest::Test\n  def test_adds\n    assert_equal 5, add(2, 3)\n  end\nend\n`;
      assert.deepEqual(kinds([change('test/add_test.rb', MT, MT.replace(/ {2}def test_adds\n.*\n {2}end\n/, ''))]), [
        'removed AddTest test_adds',
      ]);
    });
  });

  it('files that are not code (fixtures, docs) and comments are not test code', () => {
    assert.deepEqual(kinds([change('test/fixtures/data.json', '{"a": 1}', '{}')]), []);
    const commented = MOCHA.replace(
      "  it('adds two numbers'",
      "  // it('adds three numbers', () => { assert.ok(1) });\n  it('adds two numbers'",
    );
    assert.deepEqual(kinds([change('test/add.test.js', commented, MOCHA)]), []);
    const blocked = MOCHA.replace(
      "  it('adds two numbers'",
      "  /* it('old', () => {\n    assert.ok(1);\n  }); */\n  it('adds two numbers'",
    );
    assert.deepEqual(kinds([change('test/add.test.js', blocked, MOCHA)]), []);
    assert.deepEqual(readTestShape('test/add.test.js', blocked)!.cases.length, 2);
  });
});

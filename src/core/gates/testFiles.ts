import * as path from 'node:path';
import { compileGlob, matchesGlob } from '../util/glob';
import { readTextIfExists } from '../util/atomicWrite';
import { iniSections } from './definitions';
import { CONVENTIONAL_TEST_FILE } from './testFilePattern';

/**
 * How a test file is told apart from the code it tests (the fail-to-pass proof runs the base's
 * code with the result's test files):
 * 1. a task's own `proofTests` globs, when it names them — then only those;
 * 2. otherwise the conventions of the common runners: a `test/`, `tests/`, `__tests__/` or
 *    `spec/` folder, `*.test.*`, `*.spec.*`, `test_*.py`, `*_test.py`, `*_test.go`, `conftest.py`;
 * 3. the patterns the project's runner configs give: jest `testMatch`/`testRegex` (package.json,
 *    jest.config.json), mocha `spec` (.mocharc.json/.jsonc/.yml/.yaml), pytest `python_files` and
 *    `testpaths` (pytest.ini, pyproject.toml, setup.cfg, tox.ini);
 * 4. the globs of `proof.testFiles` in the configuration.
 * Tests written inside source files (Rust's `#[cfg(test)]` modules) cannot be separated.
 */

export type TestFileMatcher = (file: string) => boolean;

export async function testFileMatcher(
  workspace: string,
  globs: { task?: readonly string[]; config?: readonly string[] },
): Promise<TestFileMatcher> {
  if (globs.task && globs.task.length > 0) return globMatcher(globs.task);
  const patterns = [...(globs.config ?? []), ...(await runnerPatterns(workspace))];
  const fromConfig = globMatcher(patterns.filter((p) => !p.startsWith('re:')));
  const regexes = patterns.filter((p) => p.startsWith('re:')).flatMap((p) => safeRegExp(p.slice(3)));
  return (file) => CONVENTIONAL_TEST_FILE.test(file) || fromConfig(file) || regexes.some((r) => r.test(file));
}

function globMatcher(globs: readonly string[]): TestFileMatcher {
  const compiled = globs.flatMap((g) => {
    try {
      compileGlob(g.replace(/^\.\//, ''));
      return [g];
    } catch {
      return [];
    }
  });
  // a folder named alone (`tests`, `spec/`) stands for every file under it
  return (file) =>
    compiled.some(
      (g) =>
        matchesGlob(g, file) ||
        (!/[*?[{]/.test(g) && (file === g.replace(/^\.\/|\/$/g, '') || file.startsWith(`${g.replace(/^\.\/|\/$/g, '')}/`))),
    );
}

/** Test-file patterns of the runner configs found in the workspace (`re:` marks a regular expression). */
async function runnerPatterns(workspace: string): Promise<string[]> {
  const out: string[] = [];
  const read = (file: string) => readTextIfExists(path.join(workspace, file)).catch(() => undefined);
  const jsonOf = async (file: string): Promise<Record<string, unknown> | undefined> => {
    const text = await read(file);
    try {
      return text === undefined ? undefined : (JSON.parse(text.replace(/^\s*\/\/.*$/gm, '')) as Record<string, unknown>);
    } catch {
      return undefined;
    }
  };
  const pkg = await jsonOf('package.json');
  for (const jest of [pkg?.jest, await jsonOf('jest.config.json')]) {
    if (!jest || typeof jest !== 'object') continue;
    const { testMatch, testRegex } = jest as { testMatch?: unknown; testRegex?: unknown };
    out.push(...strings(testMatch).map((g) => g.replace(/^<rootDir>\//, '')), ...strings(testRegex).map((r) => `re:${r}`));
  }
  const mocharc = (await jsonOf('.mocharc.json')) ?? (await jsonOf('.mocharc.jsonc'));
  out.push(...strings(mocharc?.spec));
  for (const file of ['.mocharc.yml', '.mocharc.yaml']) out.push(...yamlSpec((await read(file)) ?? ''));
  for (const [file, section] of [
    ['pytest.ini', '^pytest$'],
    ['pyproject.toml', '^tool\\.pytest'],
    ['setup.cfg', '^tool:pytest$'],
    ['tox.ini', '^pytest$'],
  ] as const) {
    const text = await read(file);
    if (text === undefined) continue;
    const body = iniSections(text, new RegExp(section));
    for (const m of body.matchAll(/^(python_files|testpaths)\s*=\s*(.+)$/gm)) {
      const values = m[2]
        .replace(/[[\]",']/g, ' ')
        .split(/\s+/)
        .filter(Boolean);
      out.push(...(m[1] === 'python_files' ? values : values.map((dir) => `${dir.replace(/\/$/, '')}/**`)));
    }
  }
  return out;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** `spec: 'x'`, `spec: [a, b]` or a `spec:` list in a .mocharc.yml (enough YAML for that one key). */
function yamlSpec(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /^spec\s*:/.test(l));
  if (at < 0) return [];
  const inline = lines[at].replace(/^spec\s*:\s*/, '').trim();
  if (inline)
    return inline
      .replace(/^\[|\]$/g, '')
      .split(',')
      .map((v) => v.trim().replace(/^['"]|['"]$/g, ''))
      .filter(Boolean);
  const out: string[] = [];
  for (const line of lines.slice(at + 1)) {
    const item = /^\s+-\s*(.+)$/.exec(line);
    if (!item) break;
    out.push(item[1].trim().replace(/^['"]|['"]$/g, ''));
  }
  return out;
}

function safeRegExp(source: string): RegExp[] {
  try {
    return [new RegExp(source)];
  } catch {
    return [];
  }
}

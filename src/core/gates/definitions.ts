import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../config/schema';
import { definitionFilesNamed } from './namedFiles';
import { readTextIfExists } from '../util/atomicWrite';

/**
 * What defines what a gate checks, besides its command: the package.json scripts it runs,
 * the test-runner, type-checker, linter and coverage configs of its kind, and the scripts and
 * configs its command (or those scripts) names — not the code it checks (`namedFiles.ts`). A task may legitimately change other parts of these
 * files (a new dependency in package.json or pyproject.toml), so for the shared manifests
 * only the part that configures the gate is taken.
 */

/** One piece of a gate's definition: a whole file, or one part of a manifest. */
export interface DefinitionPart {
  /** How reports name it: `package.json scripts.test`, `pyproject.toml [tool.pytest.ini_options]`, `.mocharc.json`. */
  key: string;
  file: string;
  /** `json:<dotted key>` (package.json), `sections:<regexp>` (INI/TOML), or absent for the whole file. */
  part?: string;
}

/** A part's content at one moment: its hash (null when absent) and, for short values, the value itself. */
export interface DefinitionState {
  hash: string | null;
  preview?: string;
}

const TEST_CONFIGS = [
  ...variants('jest.config', ['js', 'ts', 'mjs', 'cjs', 'json']),
  ...variants('vitest.config', ['ts', 'js', 'mjs', 'mts', 'cjs', 'cts']),
  ...variants('vitest.workspace', ['ts', 'js', 'json']),
  ...variants('vite.config', ['ts', 'js', 'mjs', 'mts']),
  '.mocharc',
  ...variants('.mocharc', ['js', 'cjs', 'json', 'jsonc', 'yml', 'yaml']),
  // mocha before 8 reads its options from here
  'test/mocha.opts',
  ...variants('ava.config', ['js', 'cjs', 'mjs']),
  '.taprc',
  'node.config.json',
  'karma.conf.js',
  ...variants('playwright.config', ['ts', 'js']),
  'pytest.ini',
  'conftest.py',
  '.cargo/config.toml',
];
const COVERAGE_CONFIGS = ['.nycrc', ...variants('.nycrc', ['json', 'yml', 'yaml']), 'nyc.config.js', '.c8rc', '.c8rc.json', '.coveragerc'];
const TYPES_CONFIGS = ['jsconfig.json', 'mypy.ini', 'pyrightconfig.json'];
const LINT_CONFIGS = [
  ...variants('eslint.config', ['js', 'mjs', 'cjs', 'ts', 'mts', 'cts']),
  '.eslintrc',
  ...variants('.eslintrc', ['js', 'cjs', 'json', 'yml', 'yaml']),
  '.eslintignore',
  'biome.json',
  'biome.jsonc',
  'ruff.toml',
  '.ruff.toml',
  '.flake8',
  '.pylintrc',
];
const PACKAGE_KEYS: Record<string, string[]> = {
  // node-tap reads its options (timeout, coverage, files) from package.json's "tap" too
  tests: ['jest', 'mocha', 'ava', 'tap', 'c8', 'nyc'],
  coverage: ['jest', 'mocha', 'ava', 'tap', 'c8', 'nyc'],
  lint: ['eslintConfig', 'eslintIgnore'],
};
/** INI/TOML sections that configure the gate (section names as a regexp). */
const SECTIONS: Record<string, [file: string, sections: string][]> = {
  tests: [
    ['pyproject.toml', '^tool\\.pytest'],
    ['setup.cfg', '^tool:pytest$'],
    ['tox.ini', '^pytest$'],
  ],
  coverage: [
    ['pyproject.toml', '^tool\\.(pytest|coverage)'],
    ['setup.cfg', '^(tool:pytest|coverage:.*)$'],
    ['tox.ini', '^(pytest|coverage:.*)$'],
  ],
  types: [
    ['pyproject.toml', '^tool\\.(mypy|pyright)'],
    ['setup.cfg', '^mypy'],
  ],
  lint: [
    ['pyproject.toml', '^tool\\.(ruff|pylint|flake8)'],
    ['setup.cfg', '^flake8$'],
    ['tox.ini', '^flake8$'],
  ],
};
/** Cargo.toml without its dependency tables: adding a crate is not a change to the tests. */
const CARGO: [string, string] = ['Cargo.toml', '^(?!(.*\\.)?(dev-|build-)?dependencies(\\.|$)).*'];

/** The parts that define `gate` in `workspace`, as they are now (called at the task's base). */
export async function definitionParts(gate: GateConfig, workspace: string): Promise<DefinitionPart[]> {
  const parts = new Map<string, DefinitionPart>();
  const add = (p: DefinitionPart) => parts.set(p.key, p);
  const pkg = await readJson(path.join(workspace, 'package.json'));
  const scripts = scriptsRun(gate.command, pkg?.scripts ?? {});
  for (const name of scripts) add({ key: `package.json scripts.${name}`, file: 'package.json', part: `json:scripts.${name}` });
  if (usesPackageManager(gate.command)) {
    // the script itself may be missing at the base; its appearance is a change too
    for (const name of scriptNames(gate.command))
      add({ key: `package.json scripts.${name}`, file: 'package.json', part: `json:scripts.${name}` });
  }
  for (const key of PACKAGE_KEYS[gate.kind] ?? []) add({ key: `package.json ${key}`, file: 'package.json', part: `json:${key}` });
  const files: string[] = [];
  if (gate.kind === 'tests' || gate.kind === 'coverage') files.push(...TEST_CONFIGS);
  if (gate.kind === 'coverage' || gate.kind === 'tests') files.push(...COVERAGE_CONFIGS);
  if (gate.kind === 'types') files.push(...TYPES_CONFIGS, ...(await rootFiles(workspace, /^tsconfig.*\.json$/)));
  if (gate.kind === 'lint') files.push(...LINT_CONFIGS);
  for (const file of files) add({ key: file, file });
  for (const [file, sections] of SECTIONS[gate.kind] ?? []) add({ key: `${file} [${sections}]`, file, part: `sections:${sections}` });
  if (gate.kind === 'tests' || gate.kind === 'coverage')
    add({ key: 'Cargo.toml (without dependencies)', file: CARGO[0], part: `sections:${CARGO[1]}` });
  const texts = [gate.command, ...scripts.map((name) => pkg?.scripts?.[name] ?? '')];
  for (const file of await definitionFilesNamed(texts, workspace)) add({ key: file, file });
  return [...parts.values()];
}

/** The state of each part now; a missing file or key is `{ hash: null }`. */
export async function readDefinition(parts: readonly DefinitionPart[], workspace: string): Promise<Record<string, DefinitionState>> {
  const out: Record<string, DefinitionState> = {};
  const cache = new Map<string, string | undefined>();
  for (const p of parts) {
    if (!cache.has(p.file)) cache.set(p.file, await readTextIfExists(path.join(workspace, p.file)).catch(() => undefined));
    out[p.key] = stateOf(p, cache.get(p.file));
  }
  return out;
}

function stateOf(p: DefinitionPart, text: string | undefined): DefinitionState {
  if (text === undefined) return { hash: null };
  if (!p.part) return { hash: sha(text) };
  if (p.part.startsWith('json:')) {
    let value: unknown;
    try {
      value = p.part
        .slice(5)
        .split('.')
        .reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), JSON.parse(text));
    } catch {
      return { hash: sha(text), preview: '(not valid JSON)' };
    }
    if (value === undefined) return { hash: null };
    const json = JSON.stringify(value);
    return { hash: sha(json), ...(json.length <= 200 ? { preview: typeof value === 'string' ? value : json } : {}) };
  }
  const body = iniSections(text, new RegExp(p.part.slice(9)));
  return body === '' ? { hash: null } : { hash: sha(body) };
}

/** The text of the `[sections]` whose names match, in file order (blank lines and comments dropped). */
export function iniSections(text: string, names: RegExp): string {
  const kept: string[] = [];
  let inside = false;
  for (const line of text.split(/\r?\n/)) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$/.exec(line);
    if (header) inside = names.test(header[1]);
    const trimmed = line.trim();
    if (inside && trimmed && !/^[#;]/.test(trimmed)) kept.push(trimmed);
  }
  return kept.join('\n');
}

const PM = /(?:^|[;&|(]\s*|\s)(?:npm|pnpm|yarn|bun)\s+(?:(?:run|run-script)\s+)?([A-Za-z0-9:_.-]+)/g;
const PM_BUILTINS = new Set([
  'install',
  'i',
  'ci',
  'exec',
  'x',
  'dlx',
  'add',
  'remove',
  'audit',
  'outdated',
  'ls',
  'list',
  'view',
  'pack',
  'publish',
  'config',
  'init',
  'create',
  'why',
  'run',
  'run-script',
]);

function usesPackageManager(command: string): boolean {
  return /(?:^|[;&|(]\s*|\s)(?:npm|pnpm|yarn|bun)\s/.test(` ${command}`);
}

/** Script names a command runs through npm/pnpm/yarn/bun (`npm test`, `npm run lint`, `yarn test`). */
function scriptNames(text: string): string[] {
  const names: string[] = [];
  for (const m of ` ${text}`.matchAll(PM)) {
    const name = m[1] === 't' ? 'test' : m[1];
    if (!PM_BUILTINS.has(name) && !name.startsWith('-')) names.push(name);
  }
  return names;
}

/** The scripts the command runs, those they run in turn, and their pre/post hooks. */
function scriptsRun(command: string, scripts: Record<string, string>): string[] {
  const seen = new Set<string>();
  const queue = scriptNames(command);
  while (queue.length) {
    const name = queue.shift()!;
    for (const n of [`pre${name}`, name, `post${name}`]) {
      if (seen.has(n) || scripts[n] === undefined) continue;
      seen.add(n);
      queue.push(...scriptNames(scripts[n]));
    }
  }
  return [...seen];
}

async function rootFiles(workspace: string, pattern: RegExp): Promise<string[]> {
  const names = await fs.readdir(workspace).catch(() => [] as string[]);
  return names.filter((n) => pattern.test(n)).sort();
}

async function readJson(file: string): Promise<{ scripts?: Record<string, string> } | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as { scripts?: Record<string, string> };
  } catch {
    return undefined;
  }
}

function variants(stem: string, exts: string[]): string[] {
  return exts.map((e) => `${stem}.${e}`);
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../config/schema';

/**
 * Default gates for a workspace, from what it contains: `npm test`, `tsc --noEmit` and
 * eslint for Node projects; pytest, go test and cargo test for Python, Go and Rust ones;
 * `deno test` for Deno ones. Written into `.ralph/config.json` by Initialize Workspace; people
 * edit them from there.
 *
 * A test runner whose console Ralph does not read but which writes JUnit XML with a flag of its
 * own (`bun test`, `deno test`) gets that flag on the gate's command line and the file as the
 * gate's `report` (docs/test-runners.md): the user's scripts are never changed, and runners Ralph
 * reads from their console stay as they are.
 */
export async function detectGates(workspace: string): Promise<GateConfig[]> {
  const has = async (...names: string[]) => {
    for (const name of names) {
      if (
        await fs.stat(path.join(workspace, name)).then(
          () => true,
          () => false,
        )
      )
        return true;
    }
    return false;
  };
  const gates: GateConfig[] = [];
  const pkg = await readPackageJson(workspace);
  if (pkg) {
    const scripts = pkg.scripts ?? {};
    const deps = { ...pkg.dependencies, ...pkg.devDependencies };
    if (scripts.test && !/no test specified/.test(scripts.test)) gates.push(npmTestGate(scripts.test));
    if (scripts.typecheck) gates.push(gate('types', 'npm run typecheck', 'types'));
    else if ((await has('tsconfig.json')) && deps.typescript) gates.push(gate('types', 'npx tsc --noEmit', 'types'));
    if (scripts.lint) gates.push(gate('lint', 'npm run lint', 'lint'));
    else if (
      deps.eslint &&
      (await has(
        'eslint.config.js',
        'eslint.config.mjs',
        'eslint.config.cjs',
        'eslint.config.ts',
        '.eslintrc.json',
        '.eslintrc.js',
        '.eslintrc.cjs',
        '.eslintrc.yml',
        '.eslintrc',
      ))
    ) {
      gates.push(gate('lint', 'npx eslint .', 'lint'));
    }
  }
  if (await has('pyproject.toml', 'pytest.ini', 'setup.cfg', 'tox.ini', 'conftest.py'))
    gates.push(gate('tests (pytest)', 'python3 -m pytest -q', 'tests'));
  if (await has('go.mod')) gates.push(gate('tests (go)', 'go test ./...', 'tests'));
  if (await has('Cargo.toml')) gates.push(gate('tests (cargo)', 'cargo test', 'tests'));
  if (!pkg && (await has('deno.json', 'deno.jsonc'))) {
    const report = junitReport('tests-deno');
    gates.push({ ...gate('tests (deno)', `deno test --junit-path=${report}`, 'tests'), report: { junit: report } });
  }
  return gates;
}

/**
 * Where a detected gate's runner writes its JUnit report: under `.ralph/reports/`, which the
 * loop's commits never take and the agent's tools may not write.
 */
function junitReport(name: string): string {
  return `.ralph/reports/junit/${name}.xml`;
}

/**
 * `npm test`, with the JUnit flag of a runner Ralph does not read from its console when the test
 * script is that runner alone (`npm test -- <flags>` appends them to its one command).
 */
function npmTestGate(script: string): GateConfig {
  const single = !/[;&|<>`$()]/.test(script);
  if (single && /^bun test(?:\s|$)/.test(script.trim())) {
    const report = junitReport('tests');
    return { ...gate('tests', `npm test -- --reporter=junit --reporter-outfile=${report}`, 'tests'), report: { junit: report } };
  }
  return gate('tests', 'npm test', 'tests');
}

function gate(name: string, command: string, kind: GateConfig['kind']): GateConfig {
  return { name, command, kind, required: true };
}

interface PackageJson {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

async function readPackageJson(workspace: string): Promise<PackageJson | undefined> {
  try {
    return JSON.parse(await fs.readFile(path.join(workspace, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

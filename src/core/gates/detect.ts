import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../config/schema';

/**
 * Default gates for a workspace, from what it contains: `npm test`, `tsc --noEmit` and
 * eslint for Node projects; pytest, go test and cargo test for Python, Go and Rust ones.
 * Written into `.ralph/config.json` by Initialize Workspace; people edit them from there.
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
    if (scripts.test && !/no test specified/.test(scripts.test)) gates.push(gate('tests', 'npm test', 'tests'));
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
  return gates;
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

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RunnerSetting } from './affectedCommand';

/** What the workspace says of its runners (`RunnerSetting`): package.json's scripts and mocha section, the root's files, the installed tap's major version. */
export async function readRunnerSetting(workspace: string): Promise<RunnerSetting> {
  const [pkg, rootNames, tap] = await Promise.all([
    readJson(path.join(workspace, 'package.json')),
    fs.readdir(workspace).catch(() => [] as string[]),
    readJson(path.join(workspace, 'node_modules', 'tap', 'package.json')),
  ]);
  const tapMajor = typeof tap?.version === 'string' ? Number.parseInt(tap.version, 10) : undefined;
  const scripts = pkg?.scripts;
  return {
    scripts: scripts && typeof scripts === 'object' ? (scripts as Record<string, string>) : {},
    mochaSection: pkg?.mocha,
    rootFiles: new Set(rootNames),
    ...(tapMajor !== undefined && Number.isFinite(tapMajor) ? { tapMajor } : {}),
  };
}

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { openRalph } from '../core/ralph';
import { CHECKS_WORKFLOW, DEFAULT_WORKFLOW_OPTIONS, GATE_CHECK_NAME, writeWorkflows } from '../core/forge/workflows';
import type { ForgeCommand } from './command';
import { runGateCommand } from './gateCommand';
import { remoteRun, remoteStatus } from './remoteCommands';
import type { CliIo } from './io';
import { UsageError } from './args';

/** `ralph gate`, `ralph ci init`, `ralph remote run|status`. */
export async function runForgeCommand(command: ForgeCommand, io: CliIo): Promise<number> {
  const workspace = await existingDir(command.workspace);
  switch (command.kind) {
    case 'gate':
      return runGateCommand(workspace, command, io);
    case 'ci.init':
      return ciInit(workspace, command, io);
    case 'remote.run':
      return remoteRun(workspace, command, io);
    case 'remote.status':
      return remoteStatus(workspace, command, io);
  }
}

async function ciInit(workspace: string, command: Extract<ForgeCommand, { kind: 'ci.init' }>, io: CliIo): Promise<number> {
  const config = await openRalph(workspace).config.load();
  const options = {
    ...DEFAULT_WORKFLOW_OPTIONS,
    workflow: config.forge.workflow,
    ...(command.runsOn ? { runsOn: command.runsOn } : {}),
    ...(command.maxParallel ? { maxParallel: command.maxParallel } : {}),
    ...(command.node ? { node: command.node } : {}),
  };
  const written = await writeWorkflows(workspace, config, options, command.force);
  const code = written.some((w) => w.state === 'kept') ? 1 : 0;
  if (command.json) {
    const files = written.map((w) => ({ file: path.relative(workspace, w.file), state: w.state }));
    io.out(JSON.stringify({ files, nextSteps: ciNextSteps(config.llm.apiKeyEnv) }, null, 2));
    return code;
  }
  for (const w of written) {
    const rel = path.relative(workspace, w.file);
    io.out(w.state === 'kept' ? `kept ${rel}: it exists and differs (ralph ci init --force writes it again)` : `${w.state} ${rel}`);
  }
  io.out(ciNextSteps(config.llm.apiKeyEnv));
  return code;
}

/** What the forge must have for the workflows to land tasks (also in docs/github-actions.md). */
export function ciNextSteps(keyEnv: string): string {
  return [
    'Next, on GitHub:',
    `  1. the repository secret ${keyEnv} (the model's key); optionally RALPH_GITHUB_TOKEN, a fine-grained token`,
    "     or app token (contents, pull requests: write) — pull requests opened with the job's own token do not",
    `     start the ${CHECKS_WORKFLOW} checks`,
    `  2. a branch ruleset on the target branch: require a merge queue and the status check "${GATE_CHECK_NAME}"`,
    '  3. Settings → General: allow auto-merge; Settings → Actions: workflow permissions may create pull requests',
    '  4. commit and push .github/workflows and .ralph/ (config.json, tasks.json); then: ralph remote run',
  ].join('\n');
}

async function existingDir(dir: string): Promise<string> {
  const resolved = path.resolve(dir);
  const stat = await fs.stat(resolved).catch(() => undefined);
  if (!stat?.isDirectory()) throw new UsageError(`workspace "${dir}" is not a directory`);
  return resolved;
}

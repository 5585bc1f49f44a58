import { NodeCommandRunner, type CommandRunner } from '../../../src/core/commands/processRunner';
import { WorkspaceScope } from '../../../src/core/guards/workspaceScope';
import type { ToolContext } from '../../../src/core/agent/tools/types';
import type { TempWorkspace } from '../helpers/tempWorkspace';

/** A real ToolContext over a temp workspace: real scope, real shell, commits with real git. */
export function makeToolContext(ws: TempWorkspace, overrides: Partial<ToolContext> = {}): ToolContext {
  const commands: CommandRunner = new NodeCommandRunner({ killGraceMs: 1000, drainMs: 300 });
  return {
    scope: new WorkspaceScope(ws.dir),
    commands,
    async commit(message) {
      ws.git('add', '-A');
      const files = ws.git('diff', '--cached', '--name-only').split('\n').filter(Boolean);
      if (files.length === 0) return undefined;
      ws.git('commit', '-q', '-m', message);
      return { sha: ws.git('rev-parse', 'HEAD'), files };
    },
    commandTimeoutMs: 60_000,
    maxOutputChars: 20_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}

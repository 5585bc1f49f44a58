import type { GateRunner, GateRunRequest, GateRunResult } from '../gates/types';
import type { ControlFileGuard, TamperFinding } from './controlFileGuard';
import type { CommandRequest, CommandResult, CommandRunner } from '../commands/processRunner';

/** The agent's commands run with the control files watched; the agent is told what was put back. */
export class GuardedCommandRunner implements CommandRunner {
  constructor(
    private readonly inner: CommandRunner,
    private readonly guard: ControlFileGuard,
  ) {}

  async run(request: CommandRequest): Promise<CommandResult> {
    const { result, restored } = await this.guard.around(`\`${oneLine(request.command)}\``, () => this.inner.run(request));
    if (restored.length === 0) return result;
    return { ...result, output: `${result.output}\n${tamperNote(restored)}` };
  }

  environmentOf(request: CommandRequest): Promise<string | undefined> {
    return this.inner.environmentOf?.(request) ?? Promise.resolve(undefined);
  }
}

/** Gates are the user's commands, but what they run (tests, scripts) is the agent's code. */
export class GuardedGateRunner implements GateRunner {
  constructor(
    private readonly inner: GateRunner,
    private readonly guard: ControlFileGuard,
  ) {}

  async run(request: GateRunRequest): Promise<GateRunResult> {
    return (await this.guard.around(`the gate "${request.gate.name}"`, () => this.inner.run(request))).result;
  }

  environment(request: GateRunRequest): Promise<string | undefined> {
    return this.inner.environment?.(request) ?? Promise.resolve(undefined);
  }
}

export function tamperNote(found: readonly TamperFinding[]): string {
  const files = [...new Set(found.map((f) => `${f.file} (${f.change})`))].join(', ');
  return `[ralph] this changed control files, which have been restored: ${files}. .ralph/ (tasks, config, checkpoints) and .git/ configuration and hooks are the orchestrator's; leave them alone.`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 100 ? flat : `${flat.slice(0, 97)}…`;
}

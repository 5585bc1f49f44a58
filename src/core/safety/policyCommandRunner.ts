import type { RalphConfig } from '../config/schema';
import { RalphError } from '../errors';
import type { RalphEventBody } from '../events';
import type { ApprovalPrompt } from '../ports';
import { evaluateCommand } from './commandPolicy';
import type { CommandRequest, CommandResult, CommandRunner } from './processRunner';

/** A command the policy or a person refused; it never ran. */
export class CommandRefusedError extends RalphError {
  constructor(message: string) {
    super(message, 'command-refused');
  }
}

/**
 * The agent's `run_command` goes through here: denied commands are refused, gated ones
 * (and every one in semi-auto mode) are asked of a person first, the rest run. Quality gates
 * use the plain runner: they are the user's own commands, not the agent's.
 */
export class PolicyCommandRunner implements CommandRunner {
  constructor(
    private readonly inner: CommandRunner,
    private readonly config: Pick<RalphConfig, 'commands' | 'loop'>,
    private readonly approval: ApprovalPrompt,
    /** The workspace root: paths in commands are judged against it. */
    private readonly root: string,
    private readonly emit: (body: RalphEventBody) => void = () => {},
  ) {}

  async run(request: CommandRequest): Promise<CommandResult> {
    const decision = await evaluateCommand(request.command, this.config, { root: this.root, cwd: request.cwd });
    if (decision.action === 'deny') {
      this.emit({ type: 'warning', code: 'command-refused', message: `refused \`${request.command}\`: ${decision.reason}` });
      throw new CommandRefusedError(`\`${request.command}\` was refused (${decision.reason}); it did not run. Find another way that stays inside the workspace.`);
    }
    if (decision.action === 'ask') {
      const approved = await this.approval.approve({ kind: 'command', title: `Run this command the agent wants to run? (${decision.reason})`, detail: request.command });
      if (!approved) {
        this.emit({ type: 'warning', code: 'command-refused', message: `not approved \`${request.command}\` (${decision.reason})` });
        throw new CommandRefusedError(`\`${request.command}\` needs approval (${decision.reason}) and was not approved; it did not run.`);
      }
      return this.inner.run({ ...request, approved: true });
    }
    return this.inner.run(request);
  }
}

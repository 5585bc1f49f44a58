import type { RalphConfig } from '../config/schema';
import { RalphError } from '../errors';
import type { RalphEventBody } from '../events';
import type { ApprovalPrompt } from '../ports';
import { type CommandDecision, evaluateCommand } from './commandPolicy';
import type { CommandQuestions } from './commandQuestions';
import type { CommandRequest, CommandResult, CommandRunner } from './processRunner';
import { TaskChanges } from './taskChanges';

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
    private readonly person: { questions?: CommandQuestions; confined?: () => Promise<boolean> } = {},
  ) {}

  /** What changed since this runner was made, when no task's questions say what the task changed. */
  private readonly ownChanges = new TaskChanges();

  async run(request: CommandRequest): Promise<CommandResult> {
    const changes = (this.person.questions?.changes ?? this.ownChanges).in(this.root);
    const decision = await evaluateCommand(request.command, this.config, { root: this.root, cwd: request.cwd, changes });
    if (decision.action === 'deny') {
      this.emit({ type: 'warning', code: 'command-refused', message: `refused \`${request.command}\`: ${decision.reason}` });
      throw new CommandRefusedError(
        `\`${request.command}\` was refused (${decision.reason}); it did not run. Find another way that stays inside the workspace.`,
      );
    }
    if (decision.action === 'ask') return this.askPerson(request, decision);
    return this.inner.run(request);
  }

  /**
   * The rules want a person's word on this command. Not asked when the sandbox already makes it
   * harmless (a write to a path known only at run time stays inside the workspace), nor again
   * when the person approved that exact command for the task. Nobody there to ask (an unattended
   * run): kept as the task's question, and the agent is told so, instead of a bare refusal.
   */
  private async askPerson(request: CommandRequest, decision: CommandDecision): Promise<CommandResult> {
    if (decision.confinable && (await this.person.confined?.())) return this.inner.run(request);
    if (this.person.questions?.approvedByPerson(request.command)) return this.inner.run({ ...request, approved: true });
    if (this.approval.unattended && this.person.questions) {
      this.person.questions.record(request.command, decision.reason);
      this.emit({
        type: 'warning',
        code: 'command-question',
        message: `\`${request.command}\` needs a person's approval (${decision.reason}); nobody can answer now, so it is the task's question`,
      });
      throw new CommandRefusedError(
        `\`${request.command}\` needs a person's approval (${decision.reason}) and nobody can answer during this run; it did not run. It is recorded as your task's question: the task waits for the answer after this iteration. Finish what you can without it, update your progress notes, and end the iteration.`,
      );
    }
    const approved = await this.approval.approve({
      kind: 'command',
      title: `Run this command the agent wants to run? (${decision.reason})`,
      detail: request.command,
    });
    if (!approved) {
      this.emit({ type: 'warning', code: 'command-refused', message: `not approved \`${request.command}\` (${decision.reason})` });
      throw new CommandRefusedError(`\`${request.command}\` needs approval (${decision.reason}) and was not approved; it did not run.`);
    }
    return this.inner.run({ ...request, approved: true });
  }
}

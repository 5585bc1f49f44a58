import { approvedCommands, type QuestionKind } from '../tasks/questions';
import type { Task } from '../tasks/schema';
import { TaskChanges } from './taskChanges';

/** A question the loop puts to the person when the task ends (needs_help). */
export interface AskedQuestion {
  kind: QuestionKind;
  question: string;
  command?: string;
  files?: string[];
  tests?: string[];
}

/**
 * What the command rules still ask while nobody can answer (an unattended run: no terminal, no
 * `--approve-commands`): instead of failing the iteration on a refusal, the command is kept as
 * the task's question, and the task waits for the person after the iteration. An approval the
 * person gave (`ralph task answer <id> --approve`, the panel's Approve) lets exactly that
 * command run for that task from then on.
 */
export class CommandQuestions {
  private task: Pick<Task, 'id' | 'questions'> | undefined;
  private pending: AskedQuestion | undefined;
  /** What the task changed: a script of its own is asked about like inline code. */
  readonly changes = new TaskChanges();

  /** The task whose commands are judged next (its earlier answers included), and the commit it started from. */
  begin(task: Pick<Task, 'id' | 'questions'>, base?: string): void {
    this.task = task;
    this.pending = undefined;
    this.changes.begin(base);
  }

  /** The person approved this exact command for the task. */
  approvedByPerson(command: string): boolean {
    return approvedCommands(this.task?.questions).has(command.trim());
  }

  /** Keeps the first unanswerable command of the iteration as its question. */
  record(command: string, reason: string): void {
    this.pending ??= {
      kind: 'command',
      command: command.trim(),
      question: `May the agent run \`${command.trim()}\`? The command rules ask a person first (${reason}), and nobody could answer during the run.`,
    };
  }

  /** The question of the iteration that just ended, if one was recorded; cleared. */
  take(): AskedQuestion | undefined {
    const pending = this.pending;
    this.pending = undefined;
    return pending;
  }
}

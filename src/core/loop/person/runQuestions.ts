import type { RalphConfig } from '../../config/schema';
import type { RalphEventBody } from '../../events';
import { type SafeguardCode, type SafeguardPrompt, unattendedSafeguards } from '../../ports';
import type { RateAlarmHandler } from '../../spend/budget';
import type { TaskStatus } from '../../tasks/schema';
import type { PauseGate } from './pauseGate';

/** Ends after which semi-auto mode waits for the person before the next task starts. */
export const HOLD_ENDS: ReadonlySet<TaskStatus> = new Set(['blocked', 'needs_help', 'timeout']);

interface Question {
  code: SafeguardCode;
  taskId: string;
  message: string;
  iteration: number;
  maxIterations: number;
  question?: string;
}

/**
 * What a run asks a person (seed 004's warnings): the safeguards, the spend-rate alarm and
 * semi-auto's wait after a task ended. Nobody to ask (CLI without a terminal, CI): the
 * unattended policy (`safeguards.onWarning`) answers. Questions that concern every agent pause
 * the whole autopilot (every agent at its next step) until they are answered.
 */
export class RunQuestions {
  private readonly prompt: SafeguardPrompt;

  constructor(
    private readonly config: RalphConfig,
    prompt: SafeguardPrompt | undefined,
    private readonly pause: PauseGate,
    private readonly emit: (body: RalphEventBody) => void,
  ) {
    this.prompt = prompt ?? unattendedSafeguards(config.safeguards.onWarning);
  }

  /** The safeguard prompt of a task loop; with several agents, the error-threshold question pauses them all. */
  safeguards(parallel: boolean): SafeguardPrompt {
    if (!parallel) return this.prompt;
    return {
      decide: (warning) =>
        warning.code === 'error-threshold' ? this.paused(warning.taskId, () => this.prompt.decide(warning)) : this.prompt.decide(warning),
    };
  }

  /** The spend-rate alarm: the autopilot pauses, the warning names the task, the model and the rate. */
  readonly rateAlarm: RateAlarmHandler = (alarm) =>
    this.paused(alarm.taskId, () =>
      this.ask({
        code: 'spend-rate',
        taskId: alarm.taskId,
        message: alarm.message,
        iteration: alarm.iteration,
        maxIterations: alarm.maxIterations,
      }),
    );

  /**
   * Semi-auto mode: a task that ended blocked, needs_help or timeout freed its slot, and the run
   * waits for the person (Continue / Stop) before it starts another; autopilot mode goes straight on.
   */
  hold(
    task: (taskId: string) => Promise<{ iterations: number; maxIterations?: number } | undefined>,
    answer?: (taskId: string, text: string) => Promise<unknown>,
  ): ((taskId: string, status: TaskStatus, why: string) => Promise<'continue' | 'stop'>) | undefined {
    if (this.config.loop.mode !== 'semi-auto') return undefined;
    return async (taskId: string, status: TaskStatus, why: string) => {
      const known = await task(taskId).catch(() => undefined);
      // waiting_user (seed 004): a question holds the run until the person answers it (the task then resumes), goes on, or stops
      const asks = status === 'needs_help';
      const message = asks
        ? `${taskId} asks: ${why} — semi-auto mode waits for your answer (the task then resumes) before it starts the next task`
        : `${taskId} ended ${status.replace('_', ' ')} (${why}); semi-auto mode waits for you before it starts the next task`;
      return this.ask(
        {
          code: 'task-ended',
          taskId,
          message,
          iteration: known?.iterations ?? 0,
          maxIterations: known?.maxIterations ?? this.config.loop.maxIterations,
          ...(asks ? { question: why } : {}),
        },
        answer,
      );
    };
  }

  /**
   * A task halted on a critical security finding (seed 003: halt, notify at once): in either mode
   * the run asks a person before it starts another task (`stop`: none starts; agents at work go
   * on). Unattended, nobody can say the next task is safe to start: the run stops.
   */
  criticalHold(
    task: (taskId: string) => Promise<{ iterations: number; maxIterations?: number } | undefined>,
  ): (taskId: string, why: string) => Promise<'continue' | 'stop'> {
    return async (taskId: string, why: string) => {
      const known = await task(taskId).catch(() => undefined);
      const message = `${taskId} halted on a ${why}; a person decides before the next task starts (Continue starts it, Stop starts none)`;
      return this.ask({
        code: 'security-critical',
        taskId,
        message,
        iteration: known?.iterations ?? 0,
        maxIterations: known?.maxIterations ?? this.config.loop.maxIterations,
      });
    };
  }

  /** Says the question as a warning, asks it, and says the answer. */
  private async ask(question: Question, answerTask?: (taskId: string, text: string) => Promise<unknown>): Promise<'continue' | 'stop'> {
    const { question: _asked, ...warning } = question;
    this.emit({ type: 'warning', ...warning });
    const answer = await this.prompt.decide(question);
    if (answer.action === 'answer' && answerTask)
      await answerTask(question.taskId, answer.text).catch((error: unknown) =>
        this.emit({
          type: 'warning',
          taskId: question.taskId,
          code: 'answer-failed',
          message: `the answer could not be recorded: ${String(error)}`,
        }),
      );
    const action = answer.action === 'stop' ? 'stop' : answer.action === 'answer' ? 'answered' : 'continue';
    this.emit({ type: 'warning.answered', taskId: question.taskId, code: question.code, action });
    return action === 'stop' ? 'stop' : 'continue';
  }

  /** Runs `fn` with the autopilot paused (unless it already was), resumed after. */
  private async paused<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    const paused = this.pause.pause();
    if (paused) this.emit({ type: 'run.paused', taskId });
    try {
      return await fn();
    } finally {
      if (paused && this.pause.resume()) this.emit({ type: 'run.resumed', taskId });
    }
  }
}

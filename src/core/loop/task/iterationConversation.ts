import { withTaskTrailer } from '../../git/taskCommits';
import { buildIterationMessages, pinnedRequest } from '../../agent/context';
import { contentFilterFeedback, type IterationRunResult, runIteration } from '../../agent/iteration';
import { BudgetExceededError } from '../../spend/budget';
import { type WindDownCause, type WindDownResult, windDownTurn } from './windDown';
import type { ToolContext } from '../../agent/tools/types';
import { errorMessage } from '../../errors';
import type { ChatMessage } from '../../llm/types';
import type { Task } from '../../tasks/schema';
import { readTextIfExists } from '../../util/atomicWrite';
import type { Checkpoint, PendingCommit } from '../../record/checkpoint';
import { agentGateRuns } from './agentGateRuns';
import { cliAgentOf, converseThroughCli } from './agentCliConversation';
import { runHaltReason } from '../runHalt';
import type { TaskLoopServices } from './types';
import type { IterationAgent } from '../../escalation/steps';

/** What an iteration's conversation starts from: the task, where it stands, and how long it may take. */
export interface ConversationInput {
  task: Task;
  cp: Checkpoint;
  iteration: number;
  maxIterations: number;
  /** What the iteration's events and record name as its model (`agentLabel`): the built-in agent's model name. */
  model: string;
  /** The agent and model of this iteration, from the task's ladder step. */
  agent: IterationAgent;
  remainingMs: number;
  /** The task's whole time limit: a slice of it is kept for the wind-down turn, so that the turn too ends within it. */
  limitMs?: number;
  stop: AbortSignal;
  /** The model run of this iteration, recorded before a commit the process did not live past: no new model call. */
  replay?: PendingCommit;
}

/** What the agent's conversation of an iteration came to, with its wind-down turn when it was cut short. */
export interface Conversation {
  run: IterationRunResult;
  /** The iteration's stop: the person's Stop, or the task's time limit (less the wind-down reserve). */
  signal: AbortSignal;
  windDown: (WindDownResult & { cause: WindDownCause; reason: string }) | undefined;
  progressFile: string;
}

/** Fresh context → the tool conversation (or its recorded run, on a replay), with a wind-down turn when it is cut short. */
export async function converse(services: TaskLoopServices, input: ConversationInput): Promise<Conversation> {
  const { task, cp, iteration: n, maxIterations, model, stop } = input;
  const work = services.work ?? services.paths;
  // wall time, not the (possibly simulated) clock: the deadline is a real one
  const endsAt = Date.now() + input.remainingMs;
  const timeout = AbortSignal.timeout(
    Math.max(1, input.remainingMs - windDownReserveMs(services.config.loop.windDownSeconds, input.limitMs ?? input.remainingMs)),
  );
  const signal = AbortSignal.any([stop, timeout]);
  const context = {
    task,
    iteration: n,
    maxIterations,
    progressFile: work.relative(work.progress(task.id)),
    progressNotes: (await readTextIfExists(work.progress(task.id))) ?? '',
    previous: cp.history.at(-1),
    recentCommits: await services.git.log(5).catch(() => []),
  };
  const progressFile = context.progressFile;
  const cli = cliAgentOf(input.agent);
  // an agent CLI's session: its own tools and its own context; no wind-down turn (the session is ended whole)
  if (cli && !input.replay)
    return { run: await converseThroughCli(services, cli, context, signal, cp.baseCommit), signal, windDown: undefined, progressFile };
  const messages = buildIterationMessages(context);
  const toolContext: ToolContext = {
    scope: services.scope,
    commands: services.commands,
    // the trailer lets a rollback find the agents' own commits of this task
    commit: (message) => services.guard.orchestratorCommit(() => services.git.commitAll(withTaskTrailer(message, task.id))),
    commandTimeoutMs: services.config.commands.timeoutMs,
    maxOutputChars: services.config.commands.maxOutputChars,
    signal,
    gateRuns: agentGateRuns(services, task),
  };
  let windDown: (WindDownResult & { cause: WindDownCause; reason: string }) | undefined;
  const onInterrupted = async (conversation: readonly ChatMessage[], error?: unknown) => {
    const cut = interruption(services, error, stop, timeout);
    if (!cut || windDown) return;
    const { cause, reason } = cut;
    const turn = await windDownTurn(services, {
      taskId: task.id,
      iteration: n,
      cause,
      reason,
      model,
      messages: conversation,
      progressFile,
      toolContext,
      leftMs: endsAt - Date.now(),
    });
    if (turn) windDown = { ...turn, cause, reason };
  };
  const run: IterationRunResult = input.replay
    ? input.replay.run
    : await runIteration(messages, {
        model: services.model,
        modelName: model,
        temperature: services.config.llm.temperature,
        registry: services.registry,
        toolContext,
        maxSteps: services.config.llm.maxStepsPerIteration,
        taskId: task.id,
        iteration: n,
        signal,
        emit: services.emit,
        request: pinnedRequest(task),
        compaction: { contextWindow: services.config.llm.contextWindow, compactAt: services.config.llm.compactAt },
        pause: services.pause,
        onInterrupted,
      });
  return { run, signal, windDown, progressFile };
}

/** Why the conversation was cut short when a wind-down turn is due: the budget, the person's Stop or the run's halt, the time limit. */
function interruption(
  services: TaskLoopServices,
  error: unknown,
  stop: AbortSignal,
  timeout: AbortSignal,
): { cause: WindDownCause; reason: string } | undefined {
  const cause: WindDownCause | undefined =
    error instanceof BudgetExceededError
      ? 'budget'
      : error !== undefined
        ? undefined
        : stop.aborted
          ? 'stop'
          : timeout.aborted
            ? 'timeout'
            : undefined;
  if (!cause) return undefined;
  const reason =
    cause === 'budget'
      ? errorMessage(error)
      : cause === 'stop'
        ? stopCause(stop)
        : `the task timeout (${services.config.loop.taskTimeoutMinutes} min) was reached`;
  return { cause, reason };
}

/** What the next iteration is told about this one: the step limit, failed tool calls, the content filter, a wind-down. */
export function iterationFeedback(
  services: TaskLoopServices,
  run: IterationRunResult,
  windDown: Conversation['windDown'],
  progressFile: string,
): string[] {
  const feedback: string[] = [];
  if (run.stepLimitHit)
    feedback.push(
      `The previous iteration hit the step limit (${services.config.llm.maxStepsPerIteration} model calls) before finishing; work in smaller steps and keep notes.`,
    );
  if (run.toolErrors > 0) feedback.push(`${run.toolErrors} of ${run.toolCalls} tool calls failed in the previous iteration.`);
  if (run.contextFull)
    feedback.push(
      `The previous session's context filled up before it finished, and it was ended there rather than summarized: start from ${progressFile} and the working tree, and keep the notes current as you go.`,
    );
  if (run.fault === 'content_filter' && run.error) feedback.push(contentFilterFeedback('request or reply of the previous iteration'));
  if (windDown) {
    feedback.push(
      `The previous iteration was cut short (${windDown.reason}); ${windDown.wrote.length > 0 ? `you wrote your progress notes in a wind-down turn (${progressFile}): start from them` : 'no progress notes were written in the wind-down turn: check the working tree and the commits before going on'}.`,
    );
  }

  return feedback;
}

/**
 * The part of the task's time limit kept for the wind-down turn: `loop.windDownSeconds`, at most a
 * tenth of the limit. The iteration's own deadline comes that much earlier, so the turn ends by the limit.
 */
export function windDownReserveMs(windDownSeconds: number, limitMs: number): number {
  return Math.max(0, Math.min(windDownSeconds * 1000, limitMs / 10));
}

/** Who stopped the iteration: the user, or the run halting itself (the abort's reason says which). */
function stopCause(stop: AbortSignal): string {
  const halted = runHaltReason(stop);
  return halted ? `the run halted: ${halted}` : 'the user pressed Stop';
}

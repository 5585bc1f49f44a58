import { buildAgentCliPrompt } from '../../agent/context';
import type { IterationRunResult } from '../../agent/iteration';
import type { CliAgentKind } from '../../agentKinds';
import { adapterOf } from '../../agentCli/port';
import { errorMessage } from '../../errors';
import { ZERO_USAGE } from '../../llm/types';
import { BudgetExceededError } from '../../spend/budget';
import type { IterationContextInput } from '../../agent/context';
import type { TaskLoopServices } from './types';

/** The agent CLI of a task's iterations, when it is not the built-in agent. */
export function cliAgentOf(services: Pick<TaskLoopServices, 'agentCli'>, task: IterationContextInput['task']): CliAgentKind | undefined {
  const kind = services.agentCli?.kindFor(task);
  return kind && kind !== 'builtin' ? kind : undefined;
}

/** What the iteration's events and record name as its model: the CLI's label and `agent.model`. */
export function cliAgentModel(services: Pick<TaskLoopServices, 'agentCli'>, kind: CliAgentKind): string {
  return `${adapterOf(kind).label}: ${services.agentCli?.modelFor() ?? 'its default model'}`;
}

/**
 * One iteration through the task's agent CLI: the same fresh context the built-in agent gets, as
 * one prompt, in one new session in the task's folder; the CLI's turns metered (a cap ends the
 * session within the turn), its changes to `.ralph/` put back and reported by the task's guard.
 */
export async function converseThroughCli(
  services: TaskLoopServices,
  kind: CliAgentKind,
  context: IterationContextInput,
  signal: AbortSignal,
  baseCommit?: string,
): Promise<IterationRunResult> {
  const runner = services.agentCli;
  if (!runner) throw new Error('no agent CLI runner in this run');
  const { meter } = services;
  const work = services.work ?? services.paths;
  try {
    meter.check();
    await meter.guardRate();
    meter.check();
  } catch (error) {
    if (error instanceof BudgetExceededError) return emptyRun({ error: errorMessage(error) });
    throw error;
  }
  const { result } = await services.guard.around(`the ${adapterOf(kind).label} session`, () =>
    runner.run({
      kind,
      cwd: work.workspace,
      prompt: buildAgentCliPrompt(context),
      taskId: context.task.id,
      iteration: context.iteration,
      signal,
      emit: services.emit,
      onUsage: (model, usage) => {
        meter.record(model, usage);
        meter.check();
      },
      onTotalCost: (model, usd) => meter.recordCost(model, usd),
      hookContext: {
        root: work.workspace,
        ...(baseCommit ? { base: baseCommit } : {}),
        since: Date.now(),
        config: { commands: services.config.commands, loop: services.config.loop },
        progressFile: context.progressFile,
      },
    }),
  );
  // commands the hook kept for a person: the task's question after this iteration, as the built-in agent's are
  for (const q of result.questions ?? []) services.commandQuestions?.record(q.command, q.reason);
  if (result.sessionId) {
    result.agentSession = { agent: kind, id: result.sessionId, ...(result.model ? { model: result.model } : {}) };
    services.emit({
      type: 'agent.session',
      taskId: context.task.id,
      iteration: context.iteration,
      agent: kind,
      sessionId: result.sessionId,
      ...(result.model ? { model: result.model } : {}),
    });
  }
  return result;
}

function emptyRun(extra: Partial<IterationRunResult>): IterationRunResult {
  return {
    signals: [],
    finalText: '',
    usage: ZERO_USAGE,
    steps: 0,
    stepLimitHit: false,
    toolCalls: 0,
    toolErrors: 0,
    stopped: false,
    ...extra,
  };
}

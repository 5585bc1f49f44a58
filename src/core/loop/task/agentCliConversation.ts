import { buildAgentCliPrompt } from '../../agent/context';
import type { IterationRunResult } from '../../agent/iteration';
import type { CliAgentKind } from '../../agentKinds';
import { adapterOf } from '../../agentCli/port';
import { agentOnStep, type IterationAgent, ladderSteps } from '../../escalation/steps';
import { errorMessage } from '../../errors';
import { ZERO_USAGE } from '../../llm/types';
import { BudgetExceededError } from '../../spend/budget';
import type { IterationContextInput } from '../../agent/context';
import type { TaskLoopServices } from './types';

/**
 * The agent and model of a task's iterations on ladder step `tier`: the run's `--agent`, else the
 * task's own, else the step's agent, else `agent.kind` (`agentOnStep`). A run without agent CLIs
 * (no runner) runs the built-in agent.
 */
export function agentFor(
  services: Pick<TaskLoopServices, 'agentCli' | 'config'>,
  task: Pick<IterationContextInput['task'], 'agent'>,
  tier: number,
): IterationAgent {
  const { config } = services;
  const steps = ladderSteps(config.escalation.ladder, config.llm.models);
  const choice = services.agentCli?.choiceFor(task) ?? { override: 'builtin' as const, config: config.agent };
  return agentOnStep(steps, tier, choice, config.llm.models);
}

/** What the iteration's events and record name as its model: the built-in agent's model, or the CLI's label and its model. */
export function agentLabel(agent: IterationAgent): string {
  if (agent.kind === 'builtin') return agent.model ?? '';
  return `${adapterOf(agent.kind).label}: ${agent.model ?? 'its default model'}`;
}

/** The agent CLI of an iteration, when it is not the built-in agent. */
export function cliAgentOf(agent: IterationAgent): (IterationAgent & { kind: CliAgentKind }) | undefined {
  return agent.kind === 'builtin' ? undefined : { ...agent, kind: agent.kind };
}

/**
 * One iteration through the task's agent CLI: the same fresh context the built-in agent gets, as
 * one prompt, in one new session in the task's folder; the CLI's turns metered (a cap ends the
 * session within the turn), its changes to `.ralph/` put back and reported by the task's guard.
 */
export async function converseThroughCli(
  services: TaskLoopServices,
  agent: IterationAgent & { kind: CliAgentKind },
  context: IterationContextInput,
  signal: AbortSignal,
  baseCommit?: string,
): Promise<IterationRunResult> {
  const runner = services.agentCli;
  const { kind } = agent;
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
      ...(agent.model ? { model: agent.model } : {}),
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

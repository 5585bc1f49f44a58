import type { AgentKind } from '../agentKinds';
import type { AgentConfig } from '../config/agentSchema';
import type { LadderStepInput } from '../config/escalationSchema';

/**
 * A step of the escalation ladder. `agent` absent: a model of the built-in agent (a string step,
 * as in `llm.models`), on whatever agent the task has otherwise; `model` absent: the CLI's own.
 */
export interface LadderStep {
  agent?: AgentKind;
  model?: string;
}

/** The agent and model of a task's iteration. `model` absent: the agent CLI's own default. */
export interface IterationAgent {
  kind: AgentKind;
  model?: string;
}

/** Who chose the agent, strongest first: `ralph run --agent`, the task's own `agent`; then the ladder; then `agent.kind`. */
export interface AgentChoice {
  override?: AgentKind;
  task?: AgentKind;
  config: Pick<AgentConfig, 'kind' | 'model'>;
}

/** The ladder a task climbs: `escalation.ladder`, else the models of `llm.models` (today's ladder). */
export function ladderSteps(ladder: readonly LadderStepInput[] | undefined, llmModels: readonly string[]): LadderStep[] {
  if (!ladder || ladder.length === 0) return llmModels.map((model) => ({ model }));
  return ladder.map((step) =>
    typeof step === 'string' ? { model: step } : { agent: step.agent, ...(step.model ? { model: step.model } : {}) },
  );
}

/**
 * The agent and model of an iteration on ladder step `tier` (clamped to the ladder).
 * The agent: the run's `--agent`, else the task's own, else the step's, else `agent.kind`.
 * The model: the step's when the step names that agent (or is a built-in model and the agent is
 * the built-in one); an agent CLI the step does not name runs on `agent.model` (its default when
 * unset), the built-in agent on the nearest built-in model at or below the step (else the first of
 * `llm.models`) — a step never hands one agent's model name to another.
 */
export function agentOnStep(steps: readonly LadderStep[], tier: number, choice: AgentChoice, llmModels: readonly string[]): IterationAgent {
  const index = Math.max(0, Math.min(tier, steps.length - 1));
  const step: LadderStep = steps[index] ?? {};
  const kind = choice.override ?? choice.task ?? step.agent ?? choice.config.kind;
  if (kind === 'builtin') {
    for (let i = index; i >= 0; i--) {
      const s = steps[i];
      if (s && (s.agent === undefined || s.agent === 'builtin') && s.model) return { kind, model: s.model };
    }
    return { kind, model: llmModels[0] };
  }
  if (step.agent === kind) {
    const model = step.model ?? (choice.config.kind === kind ? choice.config.model : undefined);
    return model ? { kind, model } : { kind };
  }
  return choice.config.model ? { kind, model: choice.config.model } : { kind };
}

/** Every agent a task may run on as it climbs from its first step (for the check that their CLIs are found). */
export function agentsOnLadder(steps: readonly LadderStep[], choice: AgentChoice, llmModels: readonly string[]): AgentKind[] {
  const kinds = new Set<AgentKind>();
  for (let tier = 0; tier < Math.max(1, steps.length); tier++) kinds.add(agentOnStep(steps, tier, choice, llmModels).kind);
  return [...kinds];
}

/** The ladder of a config, for the check that its agents are found. */
export function ladderOfConfig(config: { escalation: { ladder?: readonly LadderStepInput[] }; llm: { models: readonly string[] } }): {
  steps: LadderStep[];
  llmModels: readonly string[];
} {
  return { steps: ladderSteps(config.escalation.ladder, config.llm.models), llmModels: config.llm.models };
}

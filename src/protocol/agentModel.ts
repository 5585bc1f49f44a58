/**
 * The agent and model of an iteration, as the panel words them. The core names an iteration's model
 * as the built-in agent's model (`gpt-4.1`) or as the CLI's label and its model (`Claude Code:
 * opus`, `Codex: its default model`); the panel shows the agent apart from its model, and the model
 * an agent CLI's session reported when it ran on the CLI's own default. Pure: the webview's too.
 */

/** The model an agent CLI runs on when neither the ladder nor `agent.model` names one (the core's words). */
const CLI_DEFAULT = 'its default model';

export interface AgentModelView {
  /** The agent (`Built-in agent`, `Claude Code`); absent in a run logged before the panel knew it. */
  agent?: string;
  model: string;
}

export function agentModelOf(view: { agent?: string; model: string; sessionModel?: string }): AgentModelView {
  const { agent, sessionModel } = view;
  if (!agent) return { model: view.model };
  const prefix = `${agent}: `;
  const model = view.model.startsWith(prefix) ? view.model.slice(prefix.length) : view.model;
  return { agent, model: model === CLI_DEFAULT && sessionModel ? sessionModel : model };
}

/** `Claude Code · opus`, `Built-in agent · gpt-4.1`, or the model alone when the agent is not known. */
export function agentModelText(view: { agent?: string; model: string; sessionModel?: string }): string {
  const { agent, model } = agentModelOf(view);
  return agent ? `${agent} · ${model}` : model;
}

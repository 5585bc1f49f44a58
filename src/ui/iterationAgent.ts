/**
 * The agent and model of the running iteration, as the status bar words them (pure: no `vscode`).
 * The core names an iteration's model as the built-in agent's model (`gpt-4.1`) or as the CLI's
 * label and its model (`Claude Code: opus`); the ladder may move a task from one to the other.
 */
import type { LiveStatus } from './liveStatus';

export interface IterationAgentWords {
  /** Beside the state: the agent CLI's name; absent for the built-in agent (the default says nothing there, as before a run). */
  short?: string;
  /** In the tooltip: `Claude Code: opus`, `Built-in agent: gpt-4.1`. */
  full: string;
}

/** The running iteration's agent and model, when one agent works (several: each has its own, in the panel). */
export function iterationAgentWords(live: LiveStatus): IterationAgentWords | undefined {
  if ((live.agents ?? []).length > 1 || !live.model || (live.state !== 'running' && live.state !== 'paused')) return undefined;
  if (live.agent === undefined || live.agent === 'builtin') return { full: `Built-in agent: ${live.model}` };
  const colon = live.model.indexOf(': ');
  return { short: colon > 0 ? live.model.slice(0, colon) : live.model, full: live.model };
}

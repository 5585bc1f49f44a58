/**
 * How the panel's agent tiles tell a task talking to the model from one whose gates run without
 * an agent slot (issue 34): pure, so the webview renders it and the unit tests read it.
 */
import type { TaskView } from './panelState';

/** `model`: it holds an agent slot; `gates`: its slot went to the next task while its gates run; `waiting`: sent back, it waits for a slot. */
export type AgentTileState = 'model' | 'gates' | 'waiting';

export interface AgentTileLook {
  state: AgentTileState;
  /** The tile's codicon (`name~modifier`). */
  icon: string;
  /** What the agent does, in words (shown on the tile and read by screen readers). */
  label: string;
}

const LOOKS: Readonly<Record<AgentTileState, AgentTileLook>> = {
  model: { state: 'model', icon: 'sync~spin', label: 'talking to the model' },
  gates: { state: 'gates', icon: 'beaker', label: 'gates running, its agent slot lent to the next task' },
  waiting: { state: 'waiting', icon: 'watch', label: 'sent back by its gates, waiting for an agent slot' },
};

export function agentTileLook(task: Pick<TaskView, 'slot'>): AgentTileLook {
  return LOOKS[task.slot ?? 'model'];
}

/** `Agents (3 running)`; with tasks off their slot, `Agents (2 talking to the model · 1 on gates · 1 waiting for a slot)`. */
export function agentsHeading(tasks: readonly Pick<TaskView, 'slot'>[]): string {
  const gates = tasks.filter((t) => t.slot === 'gates').length;
  const waiting = tasks.filter((t) => t.slot === 'waiting').length;
  if (gates === 0 && waiting === 0) return `Agents (${tasks.length} running)`;
  const parts = [`${tasks.length - gates - waiting} talking to the model`];
  if (gates > 0) parts.push(`${gates} on gates`);
  if (waiting > 0) parts.push(`${waiting} waiting for a slot`);
  return `Agents (${parts.join(' · ')})`;
}

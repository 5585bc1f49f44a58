import type { PanelState, TaskView } from '../../protocol/panelState';
import type { PanelClient } from '../client';

/** What every view renders from. */
export interface ViewContext {
  client: PanelClient;
  state: PanelState;
  /** The task shown: the one chosen, else the running (or last) one. */
  task: TaskView | undefined;
}

export function shownTask(state: PanelState, selectedTaskId: string | undefined): TaskView | undefined {
  const byId = (id: string | undefined) => (id ? state.tasks.find((t) => t.id === id) : undefined);
  return byId(selectedTaskId) ?? byId(state.currentTaskId) ?? state.tasks[state.tasks.length - 1];
}

/** `ralph-section` with a heading that labels it for screen readers. */
export function sectionId(name: string): string {
  return `section-${name}`;
}

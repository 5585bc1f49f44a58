import type { RalphConfig } from '../config/schema';
import { RalphError } from '../errors';
import type { RalphEventBody } from '../events';
import type { ModelClient } from '../llm/types';
import type { CheckpointStore } from '../record/checkpoint';
import { actionRefusal } from '../tasks/actionRules';
import type { TaskStore } from '../tasks/store';
import { conveneCouncil } from './council';

export interface CouncilOnDemandDeps {
  config: Pick<RalphConfig, 'llm' | 'escalation'>;
  model: ModelClient;
  store: TaskStore;
  checkpoints: CheckpointStore;
  emit(body: RalphEventBody): void;
  signal?: AbortSignal;
}

/**
 * Convene Bug Council on a task, asked for by the person (the loop convenes it by itself after
 * repeated failures at the top model, or when stuck): the analysts read the task's iteration
 * history, the synthesizer's plan is saved with the checkpoint and handed to the task's next
 * iteration as its first feedback — the same place the loop's own council plan goes.
 */
export async function conveneCouncilOnDemand(deps: CouncilOnDemandDeps, taskId: string, note?: string): Promise<string> {
  const task = await deps.store.get(taskId);
  const refusal = actionRefusal('council', task);
  if (refusal) throw new RalphError(refusal, 'invalid-transition');
  const cp = await deps.checkpoints.load(taskId);
  if (!cp || cp.history.length === 0)
    throw new RalphError(`task ${taskId} has no iterations yet: the council needs a history of attempts to look at`, 'no-history');
  const models = deps.config.escalation.councilModels ?? deps.config.llm.models;
  const trigger = `asked for by the person${note?.trim() ? `: ${note.trim()}` : ''}`;
  const council = await conveneCouncil({
    task,
    history: cp.history,
    trigger,
    models,
    synthesizer: deps.config.llm.models[deps.config.llm.models.length - 1],
    model: deps.model,
    signal: deps.signal ?? new AbortController().signal,
    emit: deps.emit,
    iteration: cp.iteration,
  });
  const last = cp.history[cp.history.length - 1];
  const line = `Bug council plan (root cause and next steps, from ${models.length} analysts, convened by the person):\n${council.plan}`;
  await deps.checkpoints.save({
    ...cp,
    councilPlan: council.plan,
    history: [...cp.history.slice(0, -1), { ...last, feedback: [line, ...last.feedback] }],
    updatedAt: new Date().toISOString(),
  });
  return council.plan;
}

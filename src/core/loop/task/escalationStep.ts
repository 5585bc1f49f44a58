import { conveneCouncil } from '../../escalation/council';
import { currentModel, type EscalationSettings, recordIterationResult, startEscalation } from '../../escalation/ladder';
import { detectStuck } from '../../escalation/stuck';
import { errorMessage } from '../../errors';
import type { GateReport } from '../../gates/types';
import type { Task } from '../../tasks/schema';
import type { Checkpoint, IterationRecord } from '../../record/checkpoint';
import type { TaskLoopServices } from './types';
import { agentFor, agentLabel } from './agentCliConversation';
import { type IterationAgent, ladderSteps } from '../../escalation/steps';

type EscalationServices = Pick<TaskLoopServices, 'config' | 'model' | 'emit' | 'slot' | 'agentCli'>;
type LadderServices = Pick<TaskLoopServices, 'config' | 'agentCli'>;

/** The task's ladder: each step named as its iterations will be (`gpt-4.1-mini`, `Claude Code: opus`). */
export function escalationSettings(services: LadderServices, task: Pick<Task, 'agent'>): EscalationSettings {
  const { config } = services;
  const steps = ladderSteps(config.escalation.ladder, config.llm.models);
  return {
    ladder: steps.map((_, tier) => agentLabel(agentFor(services, task, tier))),
    threshold: config.escalation.threshold,
    councilAfter: config.escalation.councilAfter,
  };
}

/** The agent and model the next iteration runs on, from the checkpointed escalation state. */
export function modelFor(services: LadderServices, task: Task, cp: Checkpoint): { cp: Checkpoint; model: string; agent: IterationAgent } {
  const settings = escalationSettings(services, task);
  const escalation = cp.escalation ?? startEscalation(task, settings.ladder.length);
  const tier = Math.min(escalation.tier, settings.ladder.length - 1);
  return { cp: { ...cp, escalation }, model: currentModel(escalation, settings.ladder), agent: agentFor(services, task, tier) };
}

/**
 * Whether an iteration failed, for escalation: a required gate failed, the iteration errored,
 * or it made no progress (nothing committed and no higher PROGRESS than before).
 */
export function iterationFailed(record: IterationRecord, previous: IterationRecord | undefined): boolean {
  if (record.outcome === 'complete' || record.outcome === 'blocked' || record.outcome === 'needs_help' || record.outcome === 'stopped')
    return false;
  if (record.outcome === 'error') return true;
  if (record.gates.some((g) => g.required && !g.passed)) return true;
  const progressed = record.progress !== undefined && record.progress > (previous?.progress ?? -1);
  return !record.commit && !progressed;
}

export interface EscalationOutcome {
  cp: Checkpoint;
  /** Set when the loop must stop: still stuck after the council. */
  halt?: string;
}

/**
 * After an iteration that did not finish the task: count the failure, escalate the model,
 * detect a stuck loop, convene the council. Guidance and the council's plan are appended to
 * the iteration's feedback, which is what the next fresh context reads.
 */
export async function afterIteration(
  services: EscalationServices,
  task: Task,
  cp: Checkpoint,
  gates: GateReport | undefined,
  stop: AbortSignal,
): Promise<EscalationOutcome> {
  const history = cp.history;
  const record = history.at(-1);
  if (!record) return { cp };
  const settings = escalationSettings(services, task);
  const previous = history.at(-2);
  const fingerprints = (records: readonly IterationRecord[]) =>
    records.map((r) => ({
      iteration: r.iteration,
      filesChanged: r.filesChanged,
      failingTests: r.failingTests,
      error: r.error,
      failed: r.failed,
    }));
  if (cp.stuckCouncilAt !== undefined) {
    // the council's plan gets a fair chance: only a pattern formed entirely after it halts the task
    const after = detectStuck(fingerprints(history.filter((r) => r.iteration > (cp.stuckCouncilAt ?? 0))));
    if (after.stuck) return { cp, halt: `stuck even after the bug council: ${after.reason}` };
  }
  const stuck = cp.stuckCouncilAt === undefined ? detectStuck(fingerprints(history)) : { stuck: false as const, reason: undefined };
  // seed 003: a high finding is fixed first and escalates the model at once; one that persists goes to the top
  const force = stuck.stuck
    ? `stuck: ${stuck.reason}`
    : record.highFinding && previous?.highFinding
      ? 'a high security finding persists'
      : undefined;
  const raise = record.highFinding && !force ? 'a high security finding: fixed first, on a stronger model' : undefined;
  const escalation = cp.escalation ?? startEscalation(task, settings.ladder.length);
  const step = recordIterationResult(escalation, settings, {
    failed: record.failed,
    iteration: record.iteration,
    reason: failureReason(record, gates),
    force,
    raise,
  });

  const feedback = [...record.feedback];
  if (step.guidance) feedback.unshift(step.guidance);
  let next: Checkpoint = { ...cp, escalation: step.state };
  if (step.escalated) {
    const to = agentFor(services, task, step.state.tier);
    services.emit({
      type: 'escalation',
      taskId: task.id,
      iteration: record.iteration,
      from: step.escalated.from,
      to: step.escalated.to,
      reason: step.escalated.reason,
      toAgent: to.kind,
      ...(to.model ? { toModel: to.model } : {}),
    });
  }
  const convene = step.convene || stuck.stuck;
  // the council talks to the models: the task's slot first (given away while its gates ran)
  if (convene && !stop.aborted) await services.slot?.take(stop);
  if (convene && !stop.aborted) next = await consultCouncil(services, task, next, { record, force, stuck: stuck.stuck, feedback, stop });
  next = { ...next, history: [...history.slice(0, -1), { ...record, feedback }] };
  return { cp: next };
}

/** What the bug council is convened on: the iteration that triggered it and why. */
interface CouncilCall {
  record: IterationRecord;
  /** The forced escalation's reason (stuck, a persisting high finding), which is then the council's trigger. */
  force: string | undefined;
  stuck: boolean;
  /** The iteration's feedback: the council's plan is put first in it. */
  feedback: string[];
  stop: AbortSignal;
}

/**
 * Convenes the bug council: its plan goes first in the iteration's feedback and into the checkpoint;
 * a stuck loop records when the council met. A council that cannot meet is a warning, not a failure.
 */
async function consultCouncil(services: EscalationServices, task: Task, cp: Checkpoint, call: CouncilCall): Promise<Checkpoint> {
  const { record, force, stuck, feedback, stop } = call;
  // the council talks to the built-in agent's models, whatever agents the ladder names
  const builtin = services.config.llm.models;
  const models = services.config.escalation.councilModels ?? builtin;
  try {
    const council = await conveneCouncil({
      task,
      history: cp.history,
      trigger: force ?? `${services.config.escalation.councilAfter} consecutive failures on the top model`,
      models,
      synthesizer: builtin[builtin.length - 1],
      model: services.model,
      signal: stop,
      emit: services.emit,
      iteration: record.iteration,
    });
    feedback.unshift(`Bug council plan (root cause and next steps, from ${models.length} analysts):\n${council.plan}`);
    return { ...cp, councilPlan: council.plan, stuckCouncilAt: stuck ? record.iteration : cp.stuckCouncilAt };
  } catch (error) {
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'council-failed',
      message: `the bug council could not meet: ${errorMessage(error)}`,
    });
    return stuck ? { ...cp, stuckCouncilAt: record.iteration } : cp;
  }
}

function failureReason(record: IterationRecord, gates: GateReport | undefined): string | undefined {
  if (record.error) return record.error.slice(0, 200);
  const failed = gates?.outcomes.filter((o) => o.required && !o.passed).map((o) => `${o.name}: ${o.summary}`) ?? [];
  if (failed.length) return failed.join('; ');
  if (record.failed) return 'no progress';
  return undefined;
}

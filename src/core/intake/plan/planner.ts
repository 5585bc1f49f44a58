import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { RalphConfig } from '../../config/schema';
import { errorMessage, RalphError } from '../../errors';
import { initialTier } from '../../escalation/ladder';
import { type EventBus, EventEmitter, type RalphEventBody } from '../../events';
import type { ChatMessage, ModelClient, RetryNotice } from '../../llm/types';
import { newRunId } from '../../loop/run/runner';
import { RunLog } from '../../loop/run/runLog';
import { RalphPaths } from '../../paths';
import { type Clock, systemClock } from '../../ports';
import { MeteredModelClient, SpendMeter } from '../../spend/budget';
import type { RunSpendSummary } from '../../spend/receipt';
import { RedactingModelClient, redactorFor } from '../../commands/secrets';
import { TaskStore } from '../../tasks/store';
import { writeFileAtomic, writeJsonAtomic } from '../../util/atomicWrite';
import { ensureRalphDir } from '../../workspace';
import { findHeading, type Heading, headings, linesOf } from '../markdownOutline';
import { planProblems } from './planDraft';
import { type PlanContext, planMessages, planTool, retryMessage } from './planPrompt';
import { planFiles, type RejectedReply, renderPlanReport } from './planReport';
import { plannedTasks, readPlanReply } from './planReply';
import type { PlanDraft, PlannedTask } from './planSchema';
import { packageScripts, repoLayout } from './repoLayout';

/** Replies the planner reads before it gives up (each bad one is told what was wrong). */
export const PLAN_ATTEMPTS = 3;

/** A document larger than this share of the model's context is planned a section at a time. */
const MAX_CONTEXT_SHARE = 0.6;

export interface PlannerDeps {
  workspace: string;
  config: RalphConfig;
  /** The model port of a run (the same settings: endpoint, fallbacks, retries); metered and redacted here. */
  model: ModelClient;
  bus: EventBus;
  store?: TaskStore;
  clock?: Clock;
  /** Secret values known to the caller (the API key), redacted from the document and the events. */
  secretValues?: readonly string[];
  /** Models paid by a subscription (the editor's): "included" on the receipt. */
  costIncluded?: (model: string) => boolean;
  signal?: AbortSignal;
}

export interface PlanRequest {
  /** The document, absolute or relative to the workspace; it must be inside the workspace. */
  document: string;
  /** Plan only this section (a heading's text or anchor). */
  section?: string;
}

export interface PlanOutcome {
  runId: string;
  draft: PlanDraft;
  /** Why the proposal cannot be accepted as it is (a dependency cycle, named); empty when it can. */
  problems: string[];
  reportFile: string;
  draftFile: string;
  logFile: string;
  spend: RunSpendSummary;
}

/** No usable plan: the model's replies could not be used, a model fault, the budget. The report says which. */
export class PlanFailedError extends RalphError {
  constructor(
    message: string,
    readonly reportFile?: string,
  ) {
    super(message, 'plan-failed');
  }
}

/**
 * A planning run: the model reads the document (or one section) and the repository's layout
 * and proposes tasks. Like a task run it has a run id, an event log (`.ralph/runs/<runId>.ndjson`),
 * the run's budget and a cost receipt, and a report of its own (`.ralph/reports/plans/<runId>.md`).
 * The proposal is saved beside the report; nothing goes into the task store here.
 */
export async function planFromDocument(deps: PlannerDeps, request: PlanRequest): Promise<PlanOutcome> {
  const paths = new RalphPaths(deps.workspace);
  const context = await readContext(deps, paths, request);
  const clock = deps.clock ?? systemClock;
  const runId = newRunId(clock);
  const log = new RunLog(paths.runLog(runId));
  const subscription = deps.bus.subscribe((event) => {
    if (event.runId === runId) log.append(event);
  });
  const keyVariables = [deps.config.llm.apiKeyEnv, ...deps.config.llm.fallback.flatMap((f) => (f.apiKeyEnv ? [f.apiKeyEnv] : []))];
  const redactor = redactorFor(process.env, { keyVariables, passThrough: [] }, deps.secretValues ?? []);
  const emitter = new EventEmitter(runId, deps.bus, clock.now);
  const emit = (body: RalphEventBody) => void emitter.emit(redactor.redactDeep(body));
  const meter = new SpendMeter(deps.config, undefined, { clock, ...(deps.costIncluded ? { included: deps.costIncluded } : {}) });
  meter.beginTask('plan');
  const model = new MeteredModelClient(new RedactingModelClient(deps.model, redactor), meter);
  const ladder = deps.config.llm.models;
  // planning is architecture work: it starts where a run starts such a task, at the top of the ladder
  const modelName = ladder[initialTier({ type: 'architecture', complexity: 14 }, ladder.length)];
  const files = planFiles(paths, runId);
  const rejected: RejectedReply[] = [];
  const report = { runId, document: context.document, section: context.section, model: modelName, rejected };
  emit({ type: 'plan.started', document: context.document, ...(context.section ? { section: context.section } : {}), model: modelName });
  try {
    await ensureRalphDir(paths);
    const onRetry = (notice: RetryNotice) => emit({ type: 'model.retry', ...notice });
    const { tasks, notes } = await propose(model, meter, { ...deps, onRetry }, modelName, context, rejected);
    const draft: PlanDraft = {
      version: 1,
      runId,
      document: context.document,
      ...(context.section ? { section: context.section } : {}),
      model: modelName,
      createdAt: new Date(clock.now()).toISOString(),
      tasks,
      ...(notes ? { notes } : {}),
    };
    const problems = planProblems(draft, context.existing);
    const outcome = problems.length > 0 ? 'refused' : 'proposed';
    const reason =
      problems.length > 0
        ? `${tasks.length} tasks proposed, but ${problems.join('; ')}`
        : `${tasks.length} task${tasks.length === 1 ? '' : 's'} proposed for review`;
    await writeJsonAtomic(files.draft, draft);
    await writeFileAtomic(files.report, renderPlanReport({ ...report, outcome, reason, draft, problems, receipt: meter.taskReceipt }));
    emit({
      type: 'plan.finished',
      document: context.document,
      outcome,
      tasks: tasks.length,
      reason,
      report: paths.relative(files.report),
      spend: meter.runSpend,
    });
    return { runId, draft, problems, reportFile: files.report, draftFile: files.draft, logFile: log.file, spend: meter.runSpend };
  } catch (error) {
    const reason = errorMessage(error);
    await writeFileAtomic(
      files.report,
      renderPlanReport({ ...report, outcome: 'failed', reason, problems: [], receipt: meter.taskReceipt }),
    ).catch(() => undefined);
    emit({
      type: 'plan.finished',
      document: context.document,
      outcome: 'failed',
      tasks: 0,
      reason,
      report: paths.relative(files.report),
      spend: meter.runSpend,
    });
    throw new PlanFailedError(`planning ${context.document} failed: ${reason} (report: ${paths.relative(files.report)})`, files.report);
  } finally {
    subscription.dispose();
    await log.close();
  }
}

/**
 * Asks for the plan until a reply can be used, at most PLAN_ATTEMPTS times; each reply that
 * cannot be used is answered with what was wrong with it.
 */
async function propose(
  model: ModelClient,
  meter: SpendMeter,
  deps: PlannerDeps & { onRetry: (notice: RetryNotice) => void },
  modelName: string,
  context: PlanContext & { planned?: Heading },
  rejected: RejectedReply[],
): Promise<{ tasks: PlannedTask[]; notes?: string }> {
  const messages: ChatMessage[] = planMessages(context);
  const existingIds = new Set(context.existing.map((t) => t.id));
  for (let attempt = 1; attempt <= PLAN_ATTEMPTS; attempt++) {
    meter.beginIteration(attempt, PLAN_ATTEMPTS);
    const response = await model.chat({
      model: modelName,
      messages,
      tools: [planTool()],
      temperature: deps.config.llm.temperature,
      purpose: 'planner',
      signal: deps.signal,
      onRetry: deps.onRetry,
    });
    const reply = readPlanReply(response);
    let problems: string[];
    if (reply.ok) {
      const planned = plannedTasks(reply.proposal, context.document, context.headings, existingIds, context.planned);
      if (planned.problems.length === 0) return { tasks: planned.tasks, ...(reply.proposal.notes ? { notes: reply.proposal.notes } : {}) };
      problems = planned.problems;
    } else problems = reply.problems;
    rejected.push({ attempt, model: response.servedBy ?? modelName, problems });
    messages.push({
      role: 'assistant',
      content: response.content || null,
      ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
    });
    // every tool call is answered (the API requires it); the feedback rides on them, or on a user turn
    for (const call of response.toolCalls) messages.push({ role: 'tool', toolCallId: call.id, content: retryMessage(problems) });
    if (response.toolCalls.length === 0) messages.push({ role: 'user', content: retryMessage(problems) });
  }
  throw new RalphError(`no usable plan after ${PLAN_ATTEMPTS} replies; the last: ${rejected.at(-1)?.problems.join('; ')}`, 'plan-unusable');
}

/** The document (inside the workspace), the part of it to plan, and what the model reads besides. */
async function readContext(deps: PlannerDeps, paths: RalphPaths, request: PlanRequest): Promise<PlanContext & { planned?: Heading }> {
  const { file, relative } = resolveDocument(deps.workspace, request.document);
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile()) throw new RalphError(`${request.document} is not a file`, 'plan-document');
  const text = await fs.readFile(file, 'utf8');
  if (!text.trim()) throw new RalphError(`${relative} is empty: there is nothing to plan`, 'plan-document');
  const outline = headings(text);
  const planned = request.section !== undefined ? findHeading(outline, request.section) : undefined;
  if (request.section !== undefined && !planned) {
    throw new RalphError(
      `${relative} has no section "${request.section}"; its headings: ${outline.map((h) => h.text).join(', ') || 'none'}`,
      'plan-section',
    );
  }
  const body = planned ? linesOf(text, planned.line, planned.end) : text;
  const limit = Math.floor(deps.config.llm.contextWindow * MAX_CONTEXT_SHARE);
  const estimate = Math.ceil(body.length / 4);
  if (estimate > limit) {
    const top = outline.filter((h) => h.level === Math.min(...outline.map((o) => o.level))).map((h) => `"${h.text}"`);
    throw new RalphError(
      `${relative} is too large to plan in one call (≈${estimate} tokens; the limit is ${limit}, ${MAX_CONTEXT_SHARE * 100}% of llm.contextWindow): plan it a section at a time with --section${top.length ? `, e.g. ${top.slice(0, 5).join(', ')}` : ''}`,
      'plan-too-large',
    );
  }
  const store = deps.store ?? new TaskStore(paths);
  return {
    document: relative,
    text: body,
    ...(planned ? { section: planned.text, planned } : {}),
    headings: planned ? outline.filter((h) => h.line >= planned.line && h.line < planned.end) : outline,
    layout: await repoLayout(deps.workspace),
    scripts: await packageScripts(deps.workspace),
    gates: deps.config.gates,
    existing: (await store.list()).map((t) => ({ id: t.id, title: t.title, status: t.status, ...(t.source ? { source: t.source } : {}) })),
  };
}

/** The document's real path and its workspace-relative form; outside the workspace is refused (tasks link to it). */
export function resolveDocument(workspace: string, document: string): { file: string; relative: string } {
  const root = realpathSync(workspace);
  let file: string;
  try {
    file = realpathSync(path.resolve(workspace, document));
  } catch {
    throw new RalphError(`${document} does not exist`, 'plan-document');
  }
  const relative = path.relative(root, file);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new RalphError(
      `${document} is outside the workspace ${workspace}: the planned tasks link to their document, so put it in the repository (e.g. docs/) and plan it from there`,
      'plan-document',
    );
  }
  return { file, relative: relative.split(path.sep).join('/') };
}

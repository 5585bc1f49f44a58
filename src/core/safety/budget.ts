import { RalphError } from '../errors';
import { estimateCostUsd, type ModelTokens } from '../llm/pricing';
import type { ChatRequest, ChatResponse, ModelClient, TokenCounter } from '../llm/types';
import type { RalphConfig } from '../config/schema';

/** A budget cap was reached; the task is halted with its state saved. */
export class BudgetExceededError extends RalphError {
  constructor(
    message: string,
    /** The config key of the cap, e.g. `budget.maxCostUsd`. */
    readonly key: string,
    /** A run-wide cap (every later task would stop at once) rather than this task's own. */
    readonly runWide: boolean,
  ) {
    super(`${message} (raise ${key} in .ralph/config.json)`, 'budget');
  }
}

export interface ModelUsageRow extends ModelTokens {
  calls: number;
}

export interface SpendTotals {
  tokens: number;
  costUsd: number;
  byModel: Record<string, ModelUsageRow>;
}

const over = (spent: number, cap: number | undefined) => cap !== undefined && spent >= cap;

const emptyTotals = (): SpendTotals => ({ tokens: 0, costUsd: 0, byModel: {} });

/**
 * Counts every model call of a run — orchestrator, sub-agents, compaction summaries, the
 * council — per model and per task, prices it, and refuses the next call once a cap is
 * reached. Checked before each call, so a run goes at most one call past a cap.
 */
export class SpendMeter {
  private task = emptyTotals();
  private taskId: string | undefined;

  constructor(
    private readonly config: Pick<RalphConfig, 'budget' | 'llm'>,
    private readonly run: SpendTotals = emptyTotals(),
  ) {}

  /** A meter for another agent of the same run: its own task totals, the run totals (and caps) shared. */
  share(): SpendMeter {
    return new SpendMeter(this.config, this.run);
  }

  /** Starts counting a task, from what its checkpoint says it already spent (a resume). */
  beginTask(taskId: string, prior: Record<string, ModelUsageRow> = {}): void {
    this.taskId = taskId;
    this.task = emptyTotals();
    for (const [model, usage] of Object.entries(prior)) this.add(this.task, model, usage);
  }

  get runTotals(): Readonly<SpendTotals> {
    return this.run;
  }

  get taskTotals(): Readonly<SpendTotals> {
    return this.task;
  }

  /** Throws BudgetExceededError when a run or task cap is already reached. */
  check(): void {
    const reached = this.runCapReached() ?? this.taskCapReached();
    if (reached) throw reached;
  }

  /** The run-wide cap that is reached, if any: no further task can make a model call in this run. */
  runCapReached(): BudgetExceededError | undefined {
    const { budget } = this.config;
    if (over(this.run.costUsd, budget.maxCostUsd)) return new BudgetExceededError(`run budget reached: $${this.run.costUsd.toFixed(4)} of $${budget.maxCostUsd} spent`, 'budget.maxCostUsd', true);
    if (over(this.run.tokens, budget.maxTokens)) return new BudgetExceededError(`run token budget reached: ${this.run.tokens} of ${budget.maxTokens} tokens used`, 'budget.maxTokens', true);
    return undefined;
  }

  private taskCapReached(): BudgetExceededError | undefined {
    const { budget } = this.config;
    if (over(this.task.costUsd, budget.taskMaxCostUsd)) return new BudgetExceededError(`task ${this.taskId} budget reached: $${this.task.costUsd.toFixed(4)} of $${budget.taskMaxCostUsd} spent`, 'budget.taskMaxCostUsd', false);
    if (over(this.task.tokens, budget.taskMaxTokens)) return new BudgetExceededError(`task ${this.taskId} token budget reached: ${this.task.tokens} of ${budget.taskMaxTokens} tokens used`, 'budget.taskMaxTokens', false);
    return undefined;
  }

  record(model: string, usage: ModelTokens): void {
    const row = { calls: 1, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens };
    this.add(this.run, model, row);
    this.add(this.task, model, row);
  }

  private add(totals: SpendTotals, model: string, usage: ModelUsageRow): void {
    const row = (totals.byModel[model] ??= { calls: 0, promptTokens: 0, completionTokens: 0 });
    row.calls += usage.calls;
    row.promptTokens += usage.promptTokens;
    row.completionTokens += usage.completionTokens;
    totals.tokens += usage.promptTokens + usage.completionTokens;
    totals.costUsd += estimateCostUsd(model, usage, this.config.llm.prices, this.config.llm.provider) ?? 0;
  }
}

/** A ModelClient that asks the meter before every call and reports every call's usage to it. */
export class MeteredModelClient implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private readonly meter: SpendMeter,
  ) {}

  /** Counting tokens is free: it passes straight through. */
  get tokens(): TokenCounter | undefined {
    return this.inner.tokens;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    // the wind-down turn is the one bounded call allowed past a cap: the agent writes its notes
    if (!request.windDown) this.meter.check();
    const response = await this.inner.chat(request);
    // a call an llm.fallback entry served is priced as that model
    this.meter.record(response.servedBy ?? request.model, response.usage);
    return response;
  }
}

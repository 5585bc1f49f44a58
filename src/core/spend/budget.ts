import { RalphError, StopRequestedError } from '../errors';
import { estimateCostUsd, type ModelTokens } from '../llm/pricing';
import type { ChatRequest, ChatResponse, ModelClient, TokenCounter, TokenUsage } from '../llm/types';
import type { RalphConfig } from '../config/schema';
import { type Clock, systemClock } from '../ports';
import {
  addLine,
  callEntry,
  type CostReceipt,
  CostReceiptSchema,
  emptyLine,
  emptyReceipt,
  type ReceiptEntry,
  type ReceiptLine,
  recordOnReceipt,
  type RunSpendSummary,
} from './receipt';
import { pruneSamples, type RateAcknowledgement, type SpendRateAlarm, spendRateAlarm, type SpendSample } from './spendRate';

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

/** The answer to a spend-rate alarm: go on (the rate is accepted) or stop the run. */
export type RateAlarmAnswer = 'continue' | 'stop';

/** Asks about a spend-rate alarm (the runner pauses the autopilot and asks the safeguard prompt). */
export type RateAlarmHandler = (alarm: SpendRateAlarm & { iteration: number; maxIterations: number }) => Promise<RateAlarmAnswer>;

export interface SpendMeterOptions {
  clock?: Clock;
  /** Models whose calls are paid by a subscription (an editor's language models): the receipt says "included", not a price. */
  included?: (model: string) => boolean;
}

/** What every agent of a run shares: the run's totals, its receipt, and the spend-rate alarm's state. */
interface RunSpend {
  totals: SpendTotals;
  receipt: CostReceipt;
  byTask: Record<string, ReceiptLine>;
  samples: SpendSample[];
  ack?: RateAcknowledgement;
  /** The alarm being asked about: agents that hit it meanwhile wait for the same answer. */
  asking?: Promise<RateAlarmAnswer>;
  /** Set when the person (or the unattended policy) answered Stop to a spend-rate alarm. */
  stopped?: BudgetExceededError;
  onAlarm?: RateAlarmHandler;
}

const over = (spent: number, cap: number | undefined) => cap !== undefined && spent >= cap;

const emptyTotals = (): SpendTotals => ({ tokens: 0, costUsd: 0, byModel: {} });

/**
 * Counts every model call of a run — orchestrator, sub-agents, compaction summaries, the
 * council — per model and per task, prices it, and refuses the next call once a cap is
 * reached. Checked before each call, so a run goes at most one call past a cap. Keeps the
 * task's cost receipt (by model, role and iteration, failures and retries included) and
 * watches the run's spend rate. A call's cost against the budget is what the provider
 * reported for it when it did, else our estimate.
 */
export class SpendMeter {
  private task = emptyTotals();
  private receipt = emptyReceipt();
  private taskId: string | undefined;
  private iteration = 0;
  private maxIterations = 0;
  private readonly run: RunSpend;
  private readonly clock: Clock;

  constructor(
    private readonly config: Pick<RalphConfig, 'budget' | 'llm'>,
    run?: SpendTotals | RunSpend,
    private readonly options: SpendMeterOptions = {},
  ) {
    this.run =
      run === undefined
        ? { totals: emptyTotals(), receipt: emptyReceipt(), byTask: {}, samples: [] }
        : 'totals' in run
          ? run
          : { totals: run, receipt: emptyReceipt(), byTask: {}, samples: [] };
    this.clock = options.clock ?? systemClock;
  }

  /** A meter for another agent of the same run: its own task totals, the run totals (and caps, and the rate alarm) shared. */
  share(): SpendMeter {
    return new SpendMeter(this.config, this.run, this.options);
  }

  /** Who answers a spend-rate alarm; without one, an alarm stops the run (nobody could allow more spending). */
  onRateAlarm(handler: RateAlarmHandler): void {
    this.run.onAlarm = handler;
  }

  /** Starts counting a task, from what its checkpoint says it already spent (a resume). */
  beginTask(taskId: string, prior: Record<string, ModelUsageRow> = {}, priorReceipt?: CostReceipt): void {
    this.taskId = taskId;
    this.task = emptyTotals();
    this.iteration = 0;
    // parsing builds new objects: the checkpoint's receipt is not shared
    this.receipt = priorReceipt ? CostReceiptSchema.parse(priorReceipt) : emptyReceipt();
    for (const [model, usage] of Object.entries(prior))
      this.add(this.task, model, usage, estimateCostUsd(model, usage, this.config.llm.prices, this.config.llm.provider) ?? 0);
  }

  /** Calls from now on belong to iteration `n` (the council after it too). */
  beginIteration(n: number, maxIterations: number): void {
    this.iteration = n;
    this.maxIterations = maxIterations;
  }

  get currentTaskId(): string | undefined {
    return this.taskId;
  }

  get runTotals(): Readonly<SpendTotals> {
    return this.run.totals;
  }

  get taskTotals(): Readonly<SpendTotals> {
    return this.task;
  }

  /** This task's receipt, across resumes (a copy). */
  get taskReceipt(): CostReceipt {
    return structuredClone(this.receipt);
  }

  /**
   * The same receipt without a copy, for a reader that copies it at once anyway (a checkpoint
   * save parses it into its own objects): three saves an iteration need not clone it first.
   */
  get taskReceiptView(): Readonly<CostReceipt> {
    return this.receipt;
  }

  /** The run's spending across its tasks (a copy). */
  get runSpend(): RunSpendSummary {
    const { total, byModel, byRole } = this.run.receipt;
    return structuredClone({ total, byModel, byRole, byTask: this.run.byTask, costUsd: this.run.totals.costUsd });
  }

  /** Throws BudgetExceededError when a run or task cap is already reached. */
  check(): void {
    const reached = this.runCapReached() ?? this.taskCapReached();
    if (reached) throw reached;
  }

  /** The run-wide cap that is reached, if any: no further task can make a model call in this run. */
  runCapReached(): BudgetExceededError | undefined {
    const { budget } = this.config;
    const run = this.run.totals;
    if (this.run.stopped) return this.run.stopped;
    if (over(run.costUsd, budget.maxCostUsd))
      return new BudgetExceededError(
        `run budget reached: $${run.costUsd.toFixed(4)} of $${budget.maxCostUsd} spent`,
        'budget.maxCostUsd',
        true,
      );
    if (over(run.tokens, budget.maxTokens))
      return new BudgetExceededError(
        `run token budget reached: ${run.tokens} of ${budget.maxTokens} tokens used`,
        'budget.maxTokens',
        true,
      );
    return undefined;
  }

  private taskCapReached(): BudgetExceededError | undefined {
    const { budget } = this.config;
    if (over(this.task.costUsd, budget.taskMaxCostUsd))
      return new BudgetExceededError(
        `task ${this.taskId} budget reached: $${this.task.costUsd.toFixed(4)} of $${budget.taskMaxCostUsd} spent`,
        'budget.taskMaxCostUsd',
        false,
      );
    if (over(this.task.tokens, budget.taskMaxTokens))
      return new BudgetExceededError(
        `task ${this.taskId} token budget reached: ${this.task.tokens} of ${budget.taskMaxTokens} tokens used`,
        'budget.taskMaxTokens',
        false,
      );
    return undefined;
  }

  /**
   * Before a call: when the run's spend rate trips the alarm, asks (once for all agents) and
   * waits for the answer. Continue accepts the rate; Stop ends the run like a run-wide cap.
   */
  async guardRate(): Promise<void> {
    if (this.run.stopped) throw this.run.stopped;
    if (!this.run.asking) {
      const now = this.clock.now();
      const alarm = spendRateAlarm(this.run.samples, now, this.config.budget, this.run.ack);
      if (!alarm) return;
      const handler = this.run.onAlarm;
      const settle = (answer: RateAlarmAnswer): RateAlarmAnswer => {
        if (answer === 'stop')
          this.run.stopped = new BudgetExceededError(
            `stopped at the spend-rate alarm: ${alarm.message}`,
            alarm.kind === 'spike' ? 'budget.spendSpikeFactor' : 'budget.maxCostPerHourUsd',
            true,
          );
        else this.run.ack = { since: this.clock.now(), acceptedRateUsdPerHour: alarm.rateUsdPerHour };
        this.run.asking = undefined;
        return answer;
      };
      const asked = handler
        ? handler({ ...alarm, iteration: this.iteration, maxIterations: this.maxIterations })
        : Promise.resolve<RateAlarmAnswer>('stop');
      // a prompt that fails cannot allow more spending: that is a Stop
      this.run.asking = asked.then(settle, () => settle('stop'));
    }
    await this.run.asking;
    if (this.run.stopped) throw this.run.stopped;
  }

  /** A call that returned, by `role` (`orchestrator`, a sub-agent, `council`, `compaction`). */
  record(model: string, usage: ModelTokens & Partial<TokenUsage>, role = 'orchestrator'): void {
    const full: TokenUsage = { totalTokens: usage.promptTokens + usage.completionTokens, ...usage };
    const included = this.options.included ?? editorPlanIncluded(this.config);
    const entry = callEntry(
      model,
      role,
      this.iteration,
      full,
      this.config.llm.prices,
      included?.(model) ?? false,
      this.config.llm.provider,
    );
    const cost = usage.providerCostUsd ?? entry.estimatedUsd ?? 0;
    const row = { calls: 1, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens };
    this.add(this.run.totals, model, row, cost);
    this.add(this.task, model, row, cost);
    this.onReceipts(entry);
    if (cost > 0) {
      const now = this.clock.now();
      this.run.samples.push({ at: now, usd: cost, taskId: this.taskId ?? '?', model });
      pruneSamples(this.run.samples, now);
    }
  }

  /**
   * What an agent CLI's session cost beyond its turns already recorded, as the CLI reports it
   * (Claude Code's `total_cost_usd`): spent against the budgets, on the receipt as the provider's figure.
   */
  recordCost(model: string, usd: number, role = 'orchestrator'): void {
    if (!(usd > 0)) return;
    this.run.totals.costUsd += usd;
    this.task.costUsd += usd;
    this.onReceipts({ model, role, iteration: this.iteration, kind: 'cost', costUsd: usd });
    const now = this.clock.now();
    this.run.samples.push({ at: now, usd, taskId: this.taskId ?? '?', model });
    pruneSamples(this.run.samples, now);
  }

  /** A call that ended in an error, or a failed attempt the client retried: on the receipt, usage unknown. */
  recordFailure(model: string, role: string, kind: 'failed' | 'retry'): void {
    this.onReceipts({ model, role, iteration: this.iteration, kind });
  }

  private onReceipts(entry: ReceiptEntry): void {
    recordOnReceipt(this.receipt, entry);
    recordOnReceipt(this.run.receipt, entry);
    const line = (this.run.byTask[this.taskId ?? '?'] ??= emptyLine());
    const single = emptyReceipt();
    recordOnReceipt(single, entry);
    addLine(line, single.total);
  }

  private add(totals: SpendTotals, model: string, usage: ModelUsageRow, costUsd: number): void {
    const row = (totals.byModel[model] ??= { calls: 0, promptTokens: 0, completionTokens: 0 });
    row.calls += usage.calls;
    row.promptTokens += usage.promptTokens;
    row.completionTokens += usage.completionTokens;
    totals.tokens += usage.promptTokens + usage.completionTokens;
    totals.costUsd += costUsd;
  }
}

/** A ModelClient that asks the meter before every call and reports every call's usage (and failures) to it. */
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
    // the wind-down turn is the one bounded call allowed past a cap (and past a spend-rate alarm): the agent writes its notes
    if (!request.windDown) {
      this.meter.check();
      await this.meter.guardRate();
      this.meter.check();
    }
    const role = request.purpose ?? 'orchestrator';
    const onRetry: ChatRequest['onRetry'] = (notice) => {
      this.meter.recordFailure(request.model, role, 'retry');
      request.onRetry?.(notice);
    };
    let response: ChatResponse;
    try {
      response = await this.inner.chat({ ...request, onRetry });
    } catch (error) {
      // a stop is not a failed call: the person ended it
      if (!request.signal?.aborted && !(error instanceof StopRequestedError)) this.meter.recordFailure(request.model, role, 'failed');
      throw error;
    }
    // a call an llm.fallback entry served is priced as that model
    this.meter.record(response.servedBy ?? request.model, response.usage, role);
    return response;
  }
}

/**
 * The editor's language models (`llm.provider` "vscode") are paid by the user's editor plan: a
 * model without an explicit `llm.prices` entry reads "included" on the receipt, not a price.
 */
export function editorPlanIncluded(config: Pick<RalphConfig, 'llm'>): ((model: string) => boolean) | undefined {
  if (config.llm.provider !== 'vscode') return undefined;
  return (model) => !Object.hasOwn(config.llm.prices, model);
}

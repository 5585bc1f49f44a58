import { z } from 'zod';
import type { RalphConfig } from '../config/schema';
import { estimateCostUsd } from '../llm/pricing';
import type { TokenUsage } from '../llm/types';

/**
 * The cost receipt of a task: every model call it made (orchestrator, sub-agents, the council,
 * compaction summaries), by model, by role and by iteration, with what failed calls and
 * retries cost. Unknown never reads as $0: a line says how many of its calls had no price,
 * how many are included in a subscription (editor models), and how many the provider itself
 * priced (`providerUsd`, next to our estimate, never mixed into it).
 */
export const ReceiptLineSchema = z.object({
  /** Calls that returned a reply. */
  calls: z.number().int().min(0).default(0),
  /** Calls that ended in an error after the client's own retries; what they used is unknown (providers report no usage for a failed call). */
  failedCalls: z.number().int().min(0).default(0),
  /** Failed attempts the client retried; their usage is unknown for the same reason. */
  retries: z.number().int().min(0).default(0),
  promptTokens: z.number().min(0).default(0),
  /** Of `promptTokens`, served from the provider's prompt cache (priced at `cachedInput`). */
  cachedPromptTokens: z.number().min(0).default(0),
  completionTokens: z.number().min(0).default(0),
  /** Our estimate from `llm.prices`, over the priced calls only. */
  estimatedUsd: z.number().min(0).default(0),
  /** Calls with no known price: their cost is unknown (not 0). */
  unpricedCalls: z.number().int().min(0).default(0),
  /** Calls whose cost is included in a subscription (e.g. an editor's language model). */
  includedCalls: z.number().int().min(0).default(0),
  /** What the provider itself reported (e.g. OpenRouter's `usage.cost`), over `providerReportedCalls`. */
  providerUsd: z.number().min(0).default(0),
  providerReportedCalls: z.number().int().min(0).default(0),
});
export type ReceiptLine = z.infer<typeof ReceiptLineSchema>;

/** Iterations itemized on the receipt; older ones are folded into `earlierIterations`. */
export const RECEIPT_ITERATIONS = 50;

export const CostReceiptSchema = z.object({
  version: z.literal(1).default(1),
  total: ReceiptLineSchema,
  byModel: z.record(z.string(), ReceiptLineSchema).default({}),
  byRole: z.record(z.string(), ReceiptLineSchema).default({}),
  /** Keyed by iteration number; `0` is spend outside any iteration. */
  byIteration: z.record(z.string(), ReceiptLineSchema).default({}),
  /** Iterations beyond the last RECEIPT_ITERATIONS, summed. */
  earlierIterations: ReceiptLineSchema.optional(),
});
export type CostReceipt = z.infer<typeof CostReceiptSchema>;

/** How a call's cost is known: a price from `llm.prices`/the built-in table, none, or included in a subscription. */
export type CostBasis = 'priced' | 'unknown' | 'included';

/** One model call (or failed attempt) to put on the receipt. */
export interface ReceiptEntry {
  model: string;
  role: string;
  iteration: number;
  /** `cost`: what a session cost as its agent CLI reports it at the end (no call of its own; `costUsd`). */
  kind: 'call' | 'failed' | 'retry' | 'cost';
  costUsd?: number;
  usage?: TokenUsage;
  /** Our estimate for a `call` (undefined: no price). */
  estimatedUsd?: number;
  included?: boolean;
}

export const emptyLine = (): ReceiptLine => ReceiptLineSchema.parse({});
export const emptyReceipt = (): CostReceipt => ({ version: 1, total: emptyLine(), byModel: {}, byRole: {}, byIteration: {} });

function addEntry(line: ReceiptLine, e: ReceiptEntry): void {
  if (e.kind === 'failed') return void line.failedCalls++;
  if (e.kind === 'retry') return void line.retries++;
  if (e.kind === 'cost') return void (line.providerUsd += e.costUsd ?? 0);
  line.calls++;
  const usage = e.usage;
  if (usage) {
    line.promptTokens += usage.promptTokens;
    line.completionTokens += usage.completionTokens;
    line.cachedPromptTokens += usage.cachedPromptTokens ?? 0;
    if (usage.providerCostUsd !== undefined) {
      line.providerUsd += usage.providerCostUsd;
      line.providerReportedCalls++;
    }
  }
  if (e.included) line.includedCalls++;
  else if (e.estimatedUsd === undefined) line.unpricedCalls++;
  else line.estimatedUsd += e.estimatedUsd;
}

export function addLine(into: ReceiptLine, line: ReceiptLine): void {
  for (const key of Object.keys(into) as (keyof ReceiptLine)[]) into[key] += line[key];
}

/** Puts one entry on the receipt (mutates it): the total, its model, its role, its iteration. */
export function recordOnReceipt(receipt: CostReceipt, e: ReceiptEntry): void {
  addEntry(receipt.total, e);
  addEntry((receipt.byModel[e.model] ??= emptyLine()), e);
  addEntry((receipt.byRole[e.role] ??= emptyLine()), e);
  addEntry((receipt.byIteration[String(e.iteration)] ??= emptyLine()), e);
  const keys = Object.keys(receipt.byIteration);
  if (keys.length > RECEIPT_ITERATIONS) {
    const oldest = keys.map(Number).sort((a, b) => a - b)[0];
    receipt.earlierIterations ??= emptyLine();
    addLine(receipt.earlierIterations, receipt.byIteration[String(oldest)]);
    delete receipt.byIteration[String(oldest)];
  }
}

/** The receipt entry of a call that returned: priced from `llm.prices` unless `included`. */
export function callEntry(
  model: string,
  role: string,
  iteration: number,
  usage: TokenUsage,
  prices: RalphConfig['llm']['prices'],
  included = false,
  provider?: RalphConfig['llm']['provider'],
): ReceiptEntry {
  return {
    model,
    role,
    iteration,
    kind: 'call',
    usage,
    included,
    estimatedUsd: included ? undefined : estimateCostUsd(model, usage, prices, provider),
  };
}

/** The line's cost as spent against the budget: the provider's figure where it gave one, our estimate for the other priced calls. */
export function budgetCostUsd(line: ReceiptLine): number {
  return line.estimatedUsd + line.providerUsd;
}

/** A compact receipt for events, the panel and `ralph status --json`: the total and the lines by model and role. */
export interface ReceiptSummary {
  total: ReceiptLine;
  byModel: Record<string, ReceiptLine>;
  byRole: Record<string, ReceiptLine>;
}

export function summarizeReceipt(receipt: CostReceipt): ReceiptSummary {
  return { total: receipt.total, byModel: receipt.byModel, byRole: receipt.byRole };
}

/** A run's spending across its tasks, for `run.finished`, the run log and the CLI summary. */
export interface RunSpendSummary extends ReceiptSummary {
  byTask: Record<string, ReceiptLine>;
  /** Spent against `budget.maxCostUsd`: the provider's figure where it gave one, else our estimate. */
  costUsd: number;
}

/** Sums receipts (the run's total across tasks). */
export function sumLines(lines: readonly ReceiptLine[]): ReceiptLine {
  const total = emptyLine();
  for (const line of lines) addLine(total, line);
  return total;
}

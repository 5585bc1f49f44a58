import type { RalphConfig } from '../config/schema';
import { usdText } from '../util/money';

export interface ModelTokens {
  promptTokens: number;
  completionTokens: number;
  /** Of `promptTokens`, those the provider served from its prompt cache (priced at `cachedInput`). */
  cachedPromptTokens?: number;
}

export interface Price {
  /** USD per 1M input tokens. */
  input: number;
  /** USD per 1M output tokens. */
  output: number;
  /** USD per 1M input tokens served from the provider's prompt cache; `input` when absent. */
  cachedInput?: number;
}

/**
 * List prices (USD per 1M tokens) of common OpenAI-compatible models, for estimates only;
 * `llm.prices` overrides or extends them (Azure deployments, OpenRouter, local models at 0).
 */
export const BUILT_IN_PRICES: Readonly<Record<string, Price>> = {
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cachedInput: 0.005 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
};

/**
 * The price of `model`: configured first, then the built-in table (also for `provider/model` ids).
 * The editor's models (`provider` "vscode") are paid through the editor's own plan: no list
 * price applies, so only a configured `llm.prices` entry prices them; otherwise their cost is
 * unknown ("included"), never $0.
 */
export function priceOf(
  model: string,
  prices: RalphConfig['llm']['prices'],
  provider: RalphConfig['llm']['provider'] = 'openai',
): Price | undefined {
  if (prices[model]) return prices[model];
  if (provider === 'vscode') return undefined;
  if (BUILT_IN_PRICES[model]) return BUILT_IN_PRICES[model];
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return BUILT_IN_PRICES[bare];
}

/** Estimated USD for `tokens` on `model`; undefined when no price is known. */
export function estimateCostUsd(
  model: string,
  tokens: ModelTokens,
  prices: RalphConfig['llm']['prices'],
  provider?: RalphConfig['llm']['provider'],
): number | undefined {
  const price = priceOf(model, prices, provider);
  if (!price) return undefined;
  const cached = Math.min(tokens.promptTokens, Math.max(0, tokens.cachedPromptTokens ?? 0));
  const uncached = tokens.promptTokens - cached;
  return (uncached * price.input + cached * (price.cachedInput ?? price.input) + tokens.completionTokens * price.output) / 1_000_000;
}

/** Dollars with at least three significant digits below $1 (`$0.0692`, `$0.00420`), cents from $1 up; `—` unknown. */
export function formatUsd(value: number | undefined): string {
  return value === undefined ? '—' : usdText(value);
}

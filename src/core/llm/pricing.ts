import type { RalphConfig } from '../config/schema';

export interface ModelTokens {
  promptTokens: number;
  completionTokens: number;
}

/** Estimated USD for `tokens` on `model` from `llm.prices` (USD per 1M tokens); undefined when unpriced. */
export function estimateCostUsd(model: string, tokens: ModelTokens, prices: RalphConfig['llm']['prices']): number | undefined {
  const price = prices[model];
  if (!price) return undefined;
  return (tokens.promptTokens * price.input + tokens.completionTokens * price.output) / 1_000_000;
}

export function formatUsd(value: number | undefined): string {
  if (value === undefined) return '—';
  return value < 0.01 && value > 0 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

import type { CostReceipt, ReceiptLine } from '../spend/receipt';
import { formatFailures, formatLineCost, formatProviderCost } from '../spend/receiptFormat';
import { list, table } from './markdown';

const HEADER = [
  '',
  'Calls',
  'Input tokens',
  'Cached input',
  'Output tokens',
  'Estimated cost',
  'Provider-reported cost',
  'Failed / retries',
];

function row(label: string, line: ReceiptLine): string[] {
  return [
    label,
    String(line.calls),
    String(line.promptTokens),
    String(line.cachedPromptTokens),
    String(line.completionTokens),
    formatLineCost(line),
    formatProviderCost(line),
    line.failedCalls || line.retries ? `${line.failedCalls} / ${line.retries}` : '—',
  ];
}

const ROLE_ORDER = ['orchestrator', 'scout', 'devo', 'caio', 'council', 'compaction'];

/** The final report's "Cost receipt": by role, by model, by iteration, with what failures cost. */
export function renderReceipt(receipt: CostReceipt | undefined): string {
  if (!receipt) return '## Cost receipt\n_no receipt: this task ran before receipts were kept_';
  const out = ['## Cost receipt'];
  const notes = [
    'Estimated from `llm.prices` (cached input at `cachedInput`); "unknown" means a model without a price, never $0.',
    "Provider-reported cost is what the provider itself returned (e.g. OpenRouter's `usage.cost`), shown next to the estimate, not mixed into it; the budget counts it in place of the estimate for those calls.",
  ];
  const failures = formatFailures(receipt.total);
  if (failures) notes.push(`Failed calls and retries: ${failures}.`);
  out.push(list(notes));
  const roles = Object.keys(receipt.byRole).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  out.push(
    `### By role\n${table(['Role', ...HEADER.slice(1)], [...roles.map((r) => row(r, receipt.byRole[r])), row('**total**', receipt.total)])}`,
  );
  out.push(
    `### By model\n${table(
      ['Model', ...HEADER.slice(1)],
      Object.entries(receipt.byModel).map(([m, line]) => row(m, line)),
    )}`,
  );
  const iterations = Object.keys(receipt.byIteration)
    .map(Number)
    .sort((a, b) => a - b);
  const rows = iterations.map((n) => row(n === 0 ? 'outside iterations' : `#${n}`, receipt.byIteration[String(n)]));
  if (receipt.earlierIterations) rows.unshift(row('earlier iterations', receipt.earlierIterations));
  out.push(`### By iteration\n${table(['Iteration', ...HEADER.slice(1)], rows)}`);
  return out.join('\n\n');
}

function rank(role: string): number {
  const i = ROLE_ORDER.indexOf(role);
  return i < 0 ? ROLE_ORDER.length : i;
}

import type { ReceiptLine, ReceiptSummary } from '../../core/spend/receipt';
import { formatFailures, formatLineCost, formatProviderCost } from '../../core/spend/receiptFormat';
import type { ReceiptLineView, ReceiptView } from '../../protocol/panelEvents';

/** A core receipt line as the panel shows it: every figure formatted here, on the host. */
export function receiptLineView(line: ReceiptLine): ReceiptLineView {
  const failures = formatFailures(line);
  return {
    calls: line.calls,
    tokens: `${line.promptTokens} in${line.cachedPromptTokens ? ` (${line.cachedPromptTokens} cached)` : ''} / ${line.completionTokens} out`,
    cost: formatLineCost(line),
    providerCost: formatProviderCost(line),
    ...(failures ? { failures } : {}),
  };
}

/** The receipt of `task.finished` for the completion card: the total and the lines by role. */
export function receiptView(summary: ReceiptSummary): ReceiptView {
  return {
    total: receiptLineView(summary.total),
    byRole: Object.entries(summary.byRole).map(([role, line]) => ({ role, ...receiptLineView(line) })),
  };
}

/** How receipt lines read (no zod, no Node: the webview renders them too). */
import { formatUsd } from '../llm/pricing';
import type { ReceiptLine } from './receipt';

/** "$0.0123", "$0.0123 + unknown (3 of 5 calls unpriced)", "unknown (no price for this model)", "included (editor plan)". */
export function formatLineCost(line: ReceiptLine): string {
  const known = line.calls - line.unpricedCalls - line.includedCalls;
  const parts: string[] = [];
  if (known > 0 || (line.unpricedCalls === 0 && line.includedCalls === 0)) parts.push(formatUsd(line.estimatedUsd));
  if (line.unpricedCalls > 0)
    parts.push(
      known > 0 || line.includedCalls > 0
        ? `unknown for ${line.unpricedCalls} of ${line.calls} calls (no price)`
        : 'unknown (no price in llm.prices)',
    );
  if (line.includedCalls > 0)
    parts.push(
      known > 0 || line.unpricedCalls > 0
        ? `included for ${line.includedCalls} call${line.includedCalls === 1 ? '' : 's'}`
        : 'included (editor plan)',
    );
  return parts.join(' + ');
}

/** "$0.0100 (provider-reported, 2 of 3 calls)", or "—" when the provider reported nothing. */
export function formatProviderCost(line: ReceiptLine): string {
  if (line.providerReportedCalls === 0) return '—';
  const all = line.providerReportedCalls === line.calls ? 'all calls' : `${line.providerReportedCalls} of ${line.calls} calls`;
  return `${formatUsd(line.providerUsd)} (provider-reported, ${all})`;
}

/** "2 failed calls and 3 retries, usage unknown", or undefined when every call went through at once. */
export function formatFailures(line: ReceiptLine): string | undefined {
  if (line.failedCalls === 0 && line.retries === 0) return undefined;
  const parts: string[] = [];
  if (line.failedCalls > 0) parts.push(`${line.failedCalls} failed call${line.failedCalls === 1 ? '' : 's'}`);
  if (line.retries > 0) parts.push(`${line.retries} retr${line.retries === 1 ? 'y' : 'ies'}`);
  return `${parts.join(' and ')}: usage unknown (providers report none for a failed attempt), not in the estimate`;
}

/** One line of text for logs and the CLI: tokens, the estimate, the provider's figure, failures. */
export function describeLine(line: ReceiptLine): string {
  const cached = line.cachedPromptTokens > 0 ? ` (${line.cachedPromptTokens} cached)` : '';
  const provider = line.providerReportedCalls > 0 ? `; ${formatProviderCost(line)}` : '';
  const failures = formatFailures(line);
  return `${line.calls} call${line.calls === 1 ? '' : 's'}, ${line.promptTokens} in${cached} / ${line.completionTokens} out tokens, est. ${formatLineCost(line)}${provider}${failures ? `; ${failures}` : ''}`;
}

import type { FindingSeverity, SecurityFinding } from './types';
import { isRecord } from './text';

/** Whether a JSON value is a SARIF log (2.1.0 or close enough: a `runs` array of tool runs). */
export function isSarif(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || !Array.isArray(value.runs)) return false;
  return (
    value.version === '2.1.0' ||
    (typeof value.$schema === 'string' && /sarif/i.test(value.$schema)) ||
    (value.runs.length > 0 && value.runs.every((r) => isRecord(r) && isRecord(r.tool)))
  );
}

/**
 * One finding per result. Severity from `properties.security-severity` (on the result, else
 * on its rule) the way GitHub code scanning reads it: ≥ 9 critical, ≥ 7 high, ≥ 4 medium,
 * else low. Without it, from `level` (the result's, else the rule's default, else the
 * spec's default `warning`): error → high, warning → medium, note → low, none → info.
 */
export function sarifFindings(log: Record<string, unknown>): SecurityFinding[] {
  const findings: SecurityFinding[] = [];
  for (const run of log.runs as unknown[]) {
    if (!isRecord(run)) continue;
    const rules = runRules(run);
    for (const result of Array.isArray(run.results) ? run.results : []) {
      if (!isRecord(result)) continue;
      const rule = findRule(result, rules);
      findings.push({
        severity: severityOf(result, rule),
        title: messageText(result.message) ?? messageText(rule?.shortDescription) ?? String(result.ruleId ?? 'finding'),
        id: typeof result.ruleId === 'string' ? result.ruleId : typeof rule?.id === 'string' ? rule.id : undefined,
        file: location(result),
      });
    }
  }
  return findings;
}

function runRules(run: Record<string, unknown>): Record<string, unknown>[] {
  const tool = isRecord(run.tool) ? run.tool : {};
  const components = [tool.driver, ...(Array.isArray(tool.extensions) ? tool.extensions : [])];
  return components.flatMap((c) => (isRecord(c) && Array.isArray(c.rules) ? c.rules.filter(isRecord) : []));
}

function findRule(result: Record<string, unknown>, rules: Record<string, unknown>[]): Record<string, unknown> | undefined {
  const ref = isRecord(result.rule) ? result.rule : {};
  const index = typeof result.ruleIndex === 'number' ? result.ruleIndex : typeof ref.index === 'number' ? ref.index : -1;
  if (index >= 0 && rules[index]) return rules[index];
  const id = typeof result.ruleId === 'string' ? result.ruleId : ref.id;
  return rules.find((r) => r.id === id);
}

function severityOf(result: Record<string, unknown>, rule: Record<string, unknown> | undefined): FindingSeverity {
  const score = securitySeverity(result.properties) ?? securitySeverity(rule?.properties);
  if (score !== undefined) return score >= 9 ? 'critical' : score >= 7 ? 'high' : score >= 4 ? 'medium' : 'low';
  const config = isRecord(rule?.defaultConfiguration) ? rule.defaultConfiguration : {};
  const level = typeof result.level === 'string' ? result.level : typeof config.level === 'string' ? config.level : 'warning';
  return level === 'error' ? 'high' : level === 'warning' ? 'medium' : level === 'note' ? 'low' : 'info';
}

/** `security-severity` is a string in the spec's examples ("8.8"); a number is accepted too. */
function securitySeverity(properties: unknown): number | undefined {
  if (!isRecord(properties)) return undefined;
  const raw = properties['security-severity'];
  const score = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() ? Number(raw) : NaN;
  return Number.isFinite(score) ? score : undefined;
}

function messageText(message: unknown): string | undefined {
  if (!isRecord(message)) return undefined;
  const text = message.text ?? message.markdown;
  return typeof text === 'string' && text.trim() ? text.trim() : undefined;
}

function location(result: Record<string, unknown>): string | undefined {
  const first = Array.isArray(result.locations) ? result.locations[0] : undefined;
  const physical = isRecord(first) && isRecord(first.physicalLocation) ? first.physicalLocation : undefined;
  const artifact = physical && isRecord(physical.artifactLocation) ? physical.artifactLocation : undefined;
  if (!artifact || typeof artifact.uri !== 'string') return undefined;
  const region = physical && isRecord(physical.region) ? physical.region : {};
  return typeof region.startLine === 'number' ? `${artifact.uri}:${region.startLine}` : artifact.uri;
}

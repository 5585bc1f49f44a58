import { z } from 'zod';
import { formatZodIssues } from '../../util/zodIssues';
import type { ScoutFindings } from './types';

/** Models write a pattern map or web results as objects now and then; both become plain lines. */
const lines = z
  .union([
    z.array(
      z.union([
        z.string(),
        z
          .object({ title: z.string().optional(), url: z.string().optional(), summary: z.string().optional() })
          .transform((o) => [o.title, o.url, o.summary].filter(Boolean).join(' — ')),
      ]),
    ),
    z.record(z.string(), z.string()).transform((record) => Object.entries(record).map(([key, value]) => `${key}: ${value}`)),
  ])
  .default([]);

/** The JSON object a scout ends with. */
export const ScoutReportSchema = z.object({
  summary: z.string().optional(),
  relevantFiles: z.array(z.string()).default([]),
  codePatterns: lines,
  webFindings: lines,
  recommendations: z.array(z.string()).default([]),
  confidence: z.enum(['low', 'medium', 'high']),
});

export type ParsedFindings = { ok: true; findings: ScoutFindings; summary?: string } | { ok: false; error: string };

/** The scout's findings from its last answer: a fenced ```json block, the whole answer, or its outermost {…}. */
export function parseFindings(answer: string): ParsedFindings {
  const candidates = jsonCandidates(answer);
  if (candidates.length === 0) return { ok: false, error: 'the answer contains no JSON object with the findings' };
  let lastError = '';
  for (const candidate of candidates) {
    let raw: unknown;
    try {
      raw = JSON.parse(candidate);
    } catch (error) {
      lastError = `the findings are not valid JSON (${(error as Error).message})`;
      continue;
    }
    const parsed = ScoutReportSchema.safeParse(raw);
    if (!parsed.success) {
      lastError = `the findings do not match the schema: ${formatZodIssues(parsed.error).join('; ')}`;
      continue;
    }
    const { summary, ...findings } = parsed.data;
    return { ok: true, findings, summary: summary?.trim() || undefined };
  }
  return { ok: false, error: lastError };
}

/** The scout's result text: its summary, then the findings the orchestrator cannot see otherwise. */
export function describeFindings(summary: string, findings: ScoutFindings): string {
  const parts = [summary.trim()];
  if (findings.relevantFiles.length > 0) parts.push(`Relevant files: ${findings.relevantFiles.join(', ')}`);
  if (findings.codePatterns.length > 0) parts.push(`Code patterns: ${findings.codePatterns.join('; ')}`);
  if (findings.webFindings.length > 0) parts.push(`Web findings: ${findings.webFindings.join('; ')}`);
  parts.push(`Confidence: ${findings.confidence}`);
  return parts.filter(Boolean).join('\n');
}

function jsonCandidates(answer: string): string[] {
  const candidates: string[] = [];
  for (const match of answer.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)) candidates.push(match[1].trim());
  const trimmed = answer.trim();
  if (trimmed.startsWith('{')) candidates.push(trimmed);
  const first = answer.indexOf('{');
  const last = answer.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(answer.slice(first, last + 1));
  return [...new Set(candidates)].filter((c) => c.startsWith('{'));
}

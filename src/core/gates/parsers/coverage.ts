import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ParsedGateOutput } from './types';
import { embeddedJson, isRecord } from './text';

type Coverage = NonNullable<ParsedGateOutput['coverage']>;

const SUMMARY_FILE = 'coverage/coverage-summary.json';
const LCOV_FILE = 'coverage/lcov.info';

/**
 * Coverage, lines preferred, from the first of: the istanbul text table (`All files | …`,
 * c8, nyc, jest, vitest), the text-summary (`Lines : 85.71% ( 6/7 )`), json-summary or lcov
 * text in the output, and then, when `cwd` is given, `coverage/coverage-summary.json` and
 * `coverage/lcov.info` on disk.
 */
export function parseCoverage(output: string, lines: readonly string[], cwd?: string): Coverage | undefined {
  return (
    fromTable(lines) ??
    fromTextSummary(lines) ??
    fromJsonSummary(embeddedJson(output), 'json-summary in the output') ??
    fromLcov(lines, 'lcov in the output') ??
    (cwd ? fromFiles(cwd) : undefined)
  );
}

function fromFiles(cwd: string): Coverage | undefined {
  const summary = readText(path.join(cwd, SUMMARY_FILE));
  const fromSummary = summary === undefined ? undefined : fromJsonSummary(safeParse(summary), SUMMARY_FILE);
  if (fromSummary) return fromSummary;
  const lcov = readText(path.join(cwd, LCOV_FILE));
  return lcov === undefined ? undefined : fromLcov(lcov.split(/\r?\n/), LCOV_FILE);
}

/**
 * `File | % Stmts | % Branch | % Funcs | % Lines | …` then `All files | 85.71 | …`. With
 * several tables (a monorepo) the lowest figure is taken: a threshold must hold for each.
 */
function fromTable(lines: readonly string[]): Coverage | undefined {
  let column = -1;
  let label = '';
  const found: number[] = [];
  for (const line of lines) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 3) continue;
    const linesAt = cells.indexOf('% Lines');
    if (cells[0] === 'File' && (linesAt >= 0 || cells.includes('% Stmts'))) {
      column = linesAt >= 0 ? linesAt : cells.indexOf('% Stmts');
      label = cells[column];
      continue;
    }
    if (column >= 0 && cells[0] === 'All files') {
      const value = Number(cells[column]);
      if (cells[column] !== '' && Number.isFinite(value)) found.push(value);
    }
  }
  if (found.length === 0) return undefined;
  const source = `text table (${label}${found.length > 1 ? `, lowest of ${found.length} tables` : ''})`;
  return { percent: Math.min(...found), source };
}

/** Istanbul's text-summary reporter: `Lines        : 85.71% ( 6/7 )`. */
function fromTextSummary(lines: readonly string[]): Coverage | undefined {
  let statements: number | undefined;
  for (const line of lines) {
    const m = /^(Lines|Statements)\s*:\s*([\d.]+)%/.exec(line.trim());
    if (m?.[1] === 'Lines') return { percent: Number(m[2]), source: 'text-summary (lines)' };
    if (m) statements = Number(m[2]);
  }
  return statements === undefined ? undefined : { percent: statements, source: 'text-summary (statements)' };
}

/** json-summary: `{ "total": { "lines": { "total", "covered", "pct" }, … } }`. */
function fromJsonSummary(values: unknown[], source: string): Coverage | undefined {
  for (const value of values) {
    if (!isRecord(value) || !isRecord(value.total)) continue;
    for (const key of ['lines', 'statements'] as const) {
      const metric = value.total[key];
      if (!isRecord(metric)) continue;
      if (typeof metric.pct === 'number') return { percent: metric.pct, source: `${source} (${key})` };
      // pct is "Unknown" when there is nothing to cover.
      if (typeof metric.total === 'number' && typeof metric.covered === 'number') {
        return { percent: percent(metric.covered, metric.total), source: `${source} (${key})` };
      }
    }
  }
  return undefined;
}

/** lcov: `LF:` (lines found) and `LH:` (lines hit) per file, summed. */
function fromLcov(lines: readonly string[], source: string): Coverage | undefined {
  let found = 0;
  let hit = 0;
  let records = 0;
  for (const line of lines) {
    const m = /^(LF|LH):(\d+)\s*$/.exec(line.trim());
    if (!m) continue;
    records++;
    if (m[1] === 'LF') found += Number(m[2]);
    else hit += Number(m[2]);
  }
  if (records === 0) return undefined;
  return { percent: percent(hit, found), source: `${source} (lines)` };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function safeParse(text: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch {
    return [];
  }
}

/** Istanbul's own rounding (down, to 2 decimals), so every source gives the figure its table shows. */
function percent(covered: number, total: number): number {
  return total === 0 ? 100 : Math.floor((1000 * 100 * covered) / total / 10) / 100;
}

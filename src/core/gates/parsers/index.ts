import { parseCoverage } from './coverage';
import { parseEslint } from './eslint';
import { parseSecurity } from './security';
import { parseTests } from './testRunners';
import type { ParsedGateOutput, ParseOptions, ParserGateKind } from './types';
import { outputLines } from './text';
import { parseTypeScript } from './typescript';

export type * from './types';
export { stripAnsi } from './text';

/**
 * Reads the numbers out of a gate's output (stdout and stderr together; colours are fine).
 * The kind picks the families: `tests` also reads a coverage table when the runner printed
 * one, `coverage` also reads test counts (the command usually runs the tests), and `custom`
 * tries everything found in the output. Only `coverage` reads files (`coverage/…` under
 * `opts.cwd`). A field is absent when nothing of its kind was recognised.
 */
export function parseGateOutput(kind: ParserGateKind, output: string, opts: ParseOptions = {}): ParsedGateOutput {
  const lines = outputLines(output);
  const parsed: ParsedGateOutput = {};
  const want = (k: ParserGateKind) => kind === k || kind === 'custom';
  if (want('tests') || kind === 'coverage') parsed.tests = parseTests(lines);
  if (want('types')) parsed.typeErrors = parseTypeScript(lines, opts.cwd);
  if (want('lint')) parsed.lintProblems = parseEslint(output, lines, opts.cwd);
  if (want('coverage') || kind === 'tests') parsed.coverage = parseCoverage(output, lines, kind === 'coverage' ? opts.cwd : undefined);
  if (want('security')) parsed.security = parseSecurity(output);
  for (const key of Object.keys(parsed) as (keyof ParsedGateOutput)[]) if (parsed[key] === undefined) delete parsed[key];
  return parsed;
}

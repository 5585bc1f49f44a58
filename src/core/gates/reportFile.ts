import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../config/schema';
import { errorMessage } from '../errors';
import { readJUnit } from './parsers/junit';
import type { TestCounts } from './parsers/types';

/**
 * A gate's own report file (`gates[].report`, issue 47): the JUnit XML its runner writes, read
 * instead of its console. Only a file this run of the gate wrote counts: the file is removed
 * before the command starts (a stale one from an earlier run, or one the agent wrote, is gone),
 * and after it ends it must be there, be a plain file and be well-formed. Otherwise the tests are
 * "not read": the exit code decides, and at the task's base the diff rule — never a pass read
 * from a file the run did not write.
 */

/** Reports larger than this are not read (a runaway writer); real suites' reports are a few MB. */
const MAX_REPORT_BYTES = 64 * 1024 * 1024;

export interface ReportRead {
  /** The tests read from the report; absent when it could not be read. */
  tests?: TestCounts;
  /** Why it was not read, said in the gate's summary and to the agent. */
  notRead?: string;
}

/** The report's path as configured and its absolute path in `cwd`. */
function reportPath(gate: GateConfig, cwd: string): { shown: string; full: string } | undefined {
  const junit = gate.report?.junit;
  return junit ? { shown: junit, full: path.resolve(cwd, junit) } : undefined;
}

/**
 * Removes the gate's report before its command runs. Returns why it could not be (then whatever
 * is there after the run is not read), undefined when it is gone or was never there.
 */
export async function clearReport(gate: GateConfig, cwd: string): Promise<string | undefined> {
  const where = reportPath(gate, cwd);
  if (!where) return undefined;
  try {
    await fs.rm(where.full, { force: true });
    return undefined;
  } catch (error) {
    return `\`${where.shown}\` could not be removed before the run (${errorMessage(error)}), so what is there is not known to be this run's`;
  }
}

/**
 * The folder the gate's runner writes its report in, made when missing: a run of the gate's
 * command may write it inside the sandbox (`GateRunRequest.writableDirs`; `.ralph/` is read-only
 * there, and a detected gate's report is under `.ralph/reports/`). Undefined for a gate without one.
 */
export async function reportDirs(gate: GateConfig, cwd: string): Promise<string[] | undefined> {
  const where = reportPath(gate, cwd);
  if (!where) return undefined;
  const dir = path.dirname(where.full);
  const made = await fs.mkdir(dir, { recursive: true }).then(
    () => true,
    () => false,
  );
  return made ? [dir] : undefined;
}

/** Reads the report the gate's run wrote; `cleared`: what `clearReport` said before the run. */
export async function readReport(gate: GateConfig, cwd: string, cleared: string | undefined): Promise<ReportRead> {
  const where = reportPath(gate, cwd);
  if (!where) return {};
  if (cleared) return { notRead: cleared };
  let stat;
  try {
    stat = await fs.lstat(where.full);
  } catch {
    return { notRead: `the run wrote no \`${where.shown}\` (check the runner's reporter flag and its output path)` };
  }
  if (!stat.isFile()) return { notRead: `\`${where.shown}\` is not a plain file` };
  if (stat.size > MAX_REPORT_BYTES) return { notRead: `\`${where.shown}\` is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MB` };
  let xml: string;
  try {
    xml = await fs.readFile(where.full, 'utf8');
  } catch (error) {
    return { notRead: `\`${where.shown}\` could not be read (${errorMessage(error)})` };
  }
  const read = readJUnit(xml, cwd);
  return 'tests' in read ? { tests: read.tests } : { notRead: `\`${where.shown}\`: ${read.error}` };
}

/** What a gate's summary says when its report was not read. */
export function reportNote(notRead: string): string {
  return `JUnit report not read: ${notRead}`;
}

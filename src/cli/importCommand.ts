import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { openRalph } from '../core/ralph';
import { parseRepo } from '../core/git/issueRefs';
import { formatImport, importIssues } from '../core/intake/github/importIssues';
import { OctokitIssueSource } from '../core/intake/github/octokitSource';
import { ensureRalphDir } from '../core/workspace';
import type { CliIo } from './io';

export const IMPORT_USAGE = `  task import --github owner/repo [--label L]... [--milestone M] [--dry-run] [--json]
                                     one task per open issue: its text the request, its acceptance criteria
                                     the promise, "depends on #N" and task lists the dependsOn, its URL the
                                     source; a re-import updates changed issues and never duplicates. An
                                     issue without criteria is flagged (a terminal asks for its promise).
                                     Token: GITHUB_TOKEN; API: GITHUB_API_URL (GitHub Enterprise)
        Exit codes: 0 every issue imported · 3 some flagged · 1 GitHub failed · 2 usage`;

export interface ImportCommand {
  kind: 'task.import';
  workspace: string;
  repo: { owner: string; repo: string };
  labels: string[];
  milestone?: string;
  dryRun: boolean;
  json: boolean;
}

/** Thrown for a malformed import command; the CLI turns it into its usage error. */
export class ImportUsageError extends Error {}

const OPTIONS = {
  workspace: { type: 'string' },
  github: { type: 'string' },
  label: { type: 'string', multiple: true },
  milestone: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** The import command `argv` names, or undefined when it is another command. */
export function parseImportCommand(argv: readonly string[], cwd: string): ImportCommand | undefined {
  const loose = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false });
  if (loose.positionals[0] !== 'task' || loose.positionals[1] !== 'import') return undefined;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ImportUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 2) throw new ImportUsageError(`unexpected argument "${positionals[2]}"`);
  if (values.github === undefined) throw new ImportUsageError('task import needs --github owner/repo');
  const repo = parseRepo(values.github);
  if (!repo) throw new ImportUsageError(`--github must be owner/repo, got "${values.github}"`);
  const labels = (values.label ?? []).map((l) => l.trim());
  if (labels.some((l) => !l)) throw new ImportUsageError('--label needs a label name');
  return {
    kind: 'task.import',
    workspace: values.workspace ?? cwd,
    repo,
    labels,
    milestone: values.milestone,
    dryRun: values['dry-run'] ?? false,
    json: values.json ?? false,
  };
}

/** `ralph task import --github owner/repo`: the token from GITHUB_TOKEN, never printed or written. */
export async function runImportCommand(command: ImportCommand, io: CliIo): Promise<number> {
  const { paths, store } = openRalph(path.resolve(command.workspace));
  // .ralph/ with its .gitignore before anything is written there
  if (!command.dryRun) await ensureRalphDir(paths);
  const source = new OctokitIssueSource({ token: process.env.GITHUB_TOKEN || undefined, baseUrl: process.env.GITHUB_API_URL || undefined });
  const ask = io.ask;
  const result = await importIssues(source, store, {
    repo: command.repo,
    labels: command.labels,
    milestone: command.milestone,
    dryRun: command.dryRun,
    ...(ask && !command.json
      ? {
          askPromise: (issue) =>
            ask(
              `#${issue.number} "${issue.title}" states no testable acceptance criterion.\nIts promise — what must be true for it to be done (empty: leave it out): `,
            ),
        }
      : {}),
  });
  if (command.json) {
    io.out(
      JSON.stringify(
        {
          dryRun: result.dryRun,
          added: result.added.map((t) => t.id),
          updated: result.updated.map((t) => t.id),
          actions: result.actions.map(({ issue, ...rest }) => ({ issue: issue.number, url: issue.url, ...rest })),
          notes: result.notes,
        },
        null,
        2,
      ),
    );
  } else {
    io.out(formatImport(result));
    if (result.added.length > 0) io.out('run them with: ralph run');
  }
  return result.actions.some((a) => a.kind === 'flagged') ? 3 : 0;
}

import * as path from 'node:path';
import { openRalph } from '../core/ralph';
import { formatImport, importIssues } from '../core/intake/github/importIssues';
import { OctokitIssueSource } from '../core/intake/github/octokitSource';
import { ensureRalphDir } from '../core/workspace';
import type { ImportCommand } from './command';
import type { CliIo } from './io';

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

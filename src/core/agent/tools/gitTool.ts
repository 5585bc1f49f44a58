import { z } from 'zod';
import { errorResult, okResult, oneLine, plural } from './results';
import { defineTool } from './types';

/** Files named in the result before it says "and N more". */
const MAX_FILES_SHOWN = 50;

export const gitCommitTool = defineTool({
  name: 'git_commit',
  description:
    'Commit every change in the workspace (new, modified and deleted files; .gitignore honoured) with the given message. Commit after each coherent step that builds.',
  schema: z.object({
    message: z.string().max(20_000).trim().min(1).describe('Commit message: a short summary line, optionally a blank line and details.'),
  }),
  async run(args, ctx) {
    const commit = await ctx.commit(args.message);
    if (!commit) {
      return errorResult('nothing to commit: the workspace has no changes since the last commit.', 'nothing to commit');
    }
    const short = commit.sha.slice(0, 7);
    const shown = commit.files.slice(0, MAX_FILES_SHOWN);
    const more = commit.files.length > shown.length ? `\n… and ${commit.files.length - shown.length} more` : '';
    return okResult(
      `committed ${short} "${oneLine(args.message)}" (${plural(commit.files.length, 'file')}):\n${shown.join('\n')}${more}`,
      `committed ${short} (${plural(commit.files.length, 'file')})`,
    );
  },
});

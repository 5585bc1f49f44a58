import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { errorMessage, PathEscapeError } from '../../errors';
import type { WorkspaceScope } from '../../guards/workspaceScope';
import { listWorkspaceFiles, looksBinary } from './fileList';
import { errorResult, okResult, oneLine, plural } from './results';
import { startRegexSearch, REGEX_DEADLINE_MS, type RegexSearch } from './regexWorker';
import { defineTool } from './types';

/** Longest query accepted (characters). */
export const MAX_QUERY_CHARS = 1000;

const MAX_MATCHES = 200;
const MAX_SEARCH_BYTES = 1024 * 1024;
const MAX_LINE_CHARS = 300;
/** Files read at once; enough to hide disk latency without opening thousands of handles. */
const CONCURRENCY = 16;

export const searchTool = defineTool({
  name: 'search',
  description:
    'Search the text files of the workspace (same files as list_files: .gitignore honoured; binary files and files over 1 MB skipped). Returns "path:line: text" per matching line, case-sensitive.',
  schema: z.object({
    query: z.string().min(1).max(MAX_QUERY_CHARS).describe('Text to find, matched literally unless regex is true.'),
    path: z
      .string()
      .max(4096)
      .optional()
      .describe('Folder or file to search, relative to the workspace root. Default: the whole workspace.'),
    regex: z.boolean().optional().describe('Treat query as a JavaScript regular expression (e.g. "function\\s+\\w+Tool"). Default: false.'),
  }),
  async run(args, ctx) {
    try {
      // Compiling is linear; only matching can run away, and that happens in the worker.
      if (args.regex) new RegExp(args.query);
    } catch (error) {
      return errorResult(
        `invalid regular expression ${JSON.stringify(args.query)}: ${errorMessage(error)}. Fix it, or search literally with regex false.`,
      );
    }
    const abs = await ctx.scope.resolve(args.path ?? '.');
    const rel = ctx.scope.relative(abs);
    const { files } = await listWorkspaceFiles(ctx.scope, abs);

    const matches: string[] = [];
    let total = 0;
    let skipped = 0;
    // A model-written regex runs in a worker with a deadline; a literal query cannot backtrack.
    const worker: RegexSearch | undefined = args.regex ? startRegexSearch(args.query, ctx.signal) : undefined;
    try {
      // Read a batch in parallel, scan it in list order: the first matches shown are always the same ones.
      for (let i = 0; i < files.length && !ctx.signal.aborted; i += CONCURRENCY) {
        const batch = files.slice(i, i + CONCURRENCY);
        const texts = await Promise.all(batch.map((file) => readSearchable(ctx.scope, file)));
        skipped += texts.filter((t) => t === undefined).length;
        if (worker) {
          const outcome = await worker.scan(texts, MAX_MATCHES - matches.length, MAX_LINE_CHARS);
          if (outcome.kind === 'aborted') break;
          if (outcome.kind === 'timeout') {
            return errorResult(
              `the regular expression ${JSON.stringify(oneLine(args.query, 200))} ran for more than ${REGEX_DEADLINE_MS / 1000} s and was stopped (nested quantifiers such as (a+)+ backtrack catastrophically). Simplify it, or search literally with regex false.`,
              'search regex too slow',
            );
          }
          if (outcome.kind === 'error') return errorResult(`search failed: ${outcome.message}`);
          total += outcome.total;
          for (const m of outcome.matches) matches.push(`${batch[m.file]}:${m.line}: ${m.text}`);
          continue;
        }
        texts.forEach((text, j) => {
          if (text === undefined) return;
          const lines = text.split('\n');
          for (let n = 0; n < lines.length; n++) {
            if (!lines[n].includes(args.query)) continue;
            total++;
            if (matches.length < MAX_MATCHES) matches.push(`${batch[j]}:${n + 1}: ${clip(lines[n].replace(/\r$/, ''))}`);
          }
        });
      }
    } finally {
      await worker?.close();
    }
    if (ctx.signal.aborted) return errorResult('search aborted');

    const where = rel === '.' ? '' : ` under ${rel}`;
    const what = `${args.regex ? 'regex' : 'text'} ${JSON.stringify(args.query)}${where}`;
    const skippedNote = skipped > 0 ? ` (${skipped} skipped: binary, over 1 MB or unreadable)` : '';
    if (total === 0) return okResult(`no matches for ${what} in ${plural(files.length, 'file')}${skippedNote}`, `no matches for ${what}`);
    const more = total > matches.length ? `\n… ${total - matches.length} more matches; narrow the path or the query` : '';
    return okResult(
      `${plural(total, 'match', 'matches')} for ${what}${skippedNote}:\n${matches.join('\n')}${more}`,
      `${plural(total, 'match', 'matches')} for ${what}`,
    );
  },
});

/** The file's text, or undefined for binaries, oversized files, vanished files and links leaving the workspace. */
async function readSearchable(scope: WorkspaceScope, file: string): Promise<string | undefined> {
  const abs = path.join(scope.root, file);
  try {
    const link = await fs.lstat(abs);
    let target = abs;
    if (link.isSymbolicLink()) target = await scope.resolve(file);
    else if (!link.isFile()) return undefined;
    const stats = await fs.stat(target);
    if (!stats.isFile() || stats.size > MAX_SEARCH_BYTES) return undefined;
    const data = await fs.readFile(target);
    return looksBinary(data) ? undefined : data.toString('utf8');
  } catch (error) {
    if (error instanceof PathEscapeError) return undefined;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    throw error;
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

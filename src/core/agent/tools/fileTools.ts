import { promises as fs, type Stats } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../../util/atomicWrite';
import { listWorkspaceFiles, looksBinary } from './fileList';
import { cleanGlob, compileGlob, matchesGlob, MAX_GLOB_CHARS } from '../../util/glob';
import { errorResult, okResult, plural } from './results';
import { defineTool, type ToolResult } from './types';

/** read_file and edit_file load whole files; beyond this, search or run_command fit better. */
const MAX_TEXT_BYTES = 10 * 1024 * 1024;
/** Lines shown by read_file are cut at a line boundary near this many characters (or ctx.maxOutputChars if larger). */
const MIN_READ_CHARS = 20_000;
const MAX_LISTED = 500;

/** Longest path accepted from the model; real paths are far shorter (PATH_MAX is 4096). */
export const MAX_PATH_CHARS = 4096;

export const pathField = z
  .string()
  .max(MAX_PATH_CHARS)
  .describe(
    'Path relative to the workspace root, forward slashes (e.g. "src/app.ts"). Paths outside the workspace or inside .git are refused.',
  );

export const readFileTool = defineTool({
  name: 'read_file',
  description:
    'Read a text file of the workspace. The first line of the result says which lines of how many are shown; the text follows exactly as stored (no line numbers). Read long files in parts with startLine/endLine.',
  schema: z.object({
    path: pathField,
    startLine: z.number().int().min(1).optional().describe('First line to return, 1-based. Default: 1.'),
    endLine: z.number().int().min(1).optional().describe('Last line to return, 1-based and inclusive. Default: the last line.'),
  }),
  async run(args, ctx) {
    const abs = await ctx.scope.resolve(args.path);
    const rel = ctx.scope.relative(abs);
    const loaded = await loadText(abs, rel);
    if ('result' in loaded) return loaded.result;

    const lines = splitLines(loaded.text);
    const total = lines.length;
    if (total === 0) return okResult(`${rel}: empty file`, `read ${rel} (empty)`);
    const start = args.startLine ?? 1;
    if (start > total) return errorResult(`startLine ${start} is past the end of ${rel}, which has ${plural(total, 'line')}.`);
    if (args.endLine !== undefined && args.endLine < start) {
      return errorResult(`endLine ${args.endLine} is before startLine ${start}; endLine is inclusive and must be >= startLine.`);
    }
    const end = Math.min(args.endLine ?? total, total);

    const budget = Math.max(MIN_READ_CHARS, ctx.maxOutputChars);
    const shown: string[] = [];
    let used = 0;
    for (let n = start; n <= end; n++) {
      const line = lines[n - 1];
      if (shown.length > 0 && used + line.length + 1 > budget) break;
      shown.push(line.length > budget ? `${line.slice(0, budget)}… [line cut: ${line.length} characters]` : line);
      used += line.length + 1;
    }
    const last = start + shown.length - 1;
    let header = `${rel} — lines ${start}-${last} of ${total}`;
    if (last < end) header += ` (output cap reached; continue with startLine=${last + 1})`;
    return okResult(`${header}\n${shown.join('\n')}`, `read ${rel} (lines ${start}-${last} of ${total})`);
  },
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Create a file or replace its whole content. Missing parent folders are created. Prefer edit_file for small changes to an existing file.',
  schema: z.object({
    path: pathField,
    content: z.string().describe('The complete new content of the file.'),
  }),
  async run(args, ctx) {
    const abs = await ctx.scope.resolve(args.path, { forWrite: true });
    const rel = ctx.scope.relative(abs);
    const before = await statIfExists(abs);
    if (before?.isDirectory()) return errorResult(`${rel} is a directory; give the path of a file inside it.`);
    await writeFileAtomic(abs, args.content);
    if (before) await fs.chmod(abs, before.mode & 0o7777);
    const size = `${plural(splitLines(args.content).length, 'line')}, ${plural(Buffer.byteLength(args.content), 'byte')}`;
    return okResult(`${before ? 'overwrote' : 'created'} ${rel} (${size})`, `wrote ${rel} (${size})`);
  },
});

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace one exact piece of text in a file. oldText must occur exactly once, character for character (indentation and line breaks included); add surrounding lines to make it unique. To delete text, pass an empty newText.',
  schema: z.object({
    path: pathField,
    oldText: z.string().min(1).describe('The exact text to replace, as it appears in the file now; must occur exactly once.'),
    newText: z.string().describe('The text to put in its place.'),
  }),
  async run(args, ctx) {
    const abs = await ctx.scope.resolve(args.path, { forWrite: true });
    const rel = ctx.scope.relative(abs);
    const loaded = await loadText(abs, rel);
    if ('result' in loaded) return loaded.result;
    const { text, stats } = loaded;

    let { oldText, newText } = args;
    // Models write \n; keep a CRLF file CRLF instead of failing every match.
    if (text.includes('\r\n') && !oldText.includes('\r')) {
      oldText = oldText.replace(/\n/g, '\r\n');
      newText = newText.replace(/\n/g, '\r\n');
    }
    const positions = occurrences(text, oldText);
    if (positions.length === 0) {
      return errorResult(`oldText was not found in ${rel} (0 occurrences). ${missHint(text, oldText)}`, `edit ${rel}: oldText not found`);
    }
    if (positions.length > 1) {
      const at = positions
        .slice(0, 10)
        .map((i) => lineAt(text, i))
        .join(', ');
      return errorResult(
        `oldText occurs ${positions.length} times in ${rel} (at lines ${at}); it must occur exactly once. Include more of the surrounding lines in oldText so that it is unique.`,
        `edit ${rel}: oldText matched ${positions.length} times`,
      );
    }
    const index = positions[0];
    await writeFileAtomic(abs, text.slice(0, index) + newText + text.slice(index + oldText.length));
    await fs.chmod(abs, stats.mode & 0o7777);
    const line = lineAt(text, index);
    const change = `${plural(countLines(oldText), 'line')} at line ${line} with ${plural(countLines(newText), 'line')}`;
    return okResult(`edited ${rel}: replaced ${change}`, `edited ${rel} (line ${line})`);
  },
});

export const listFilesTool = defineTool({
  name: 'list_files',
  description:
    'List files of the workspace, one path per line relative to the root. Honours .gitignore in a git repository (node_modules and .git are always skipped otherwise). Narrow with a folder and/or a glob pattern.',
  schema: z.object({
    path: pathField.optional().describe('Folder to list, relative to the workspace root. Default: the whole workspace.'),
    pattern: z
      .string()
      .max(MAX_GLOB_CHARS)
      .optional()
      .describe(
        'Glob filter: "*.md" (file name at any depth), "src/**/*.ts" (path from the root or from `path`); supports **, *, ?, {a,b} and [abc].',
      ),
  }),
  async run(args, ctx) {
    const abs = await ctx.scope.resolve(args.path ?? '.');
    const rel = ctx.scope.relative(abs);
    if (!(await statIfExists(abs))) return errorResult(`no such file or directory: ${rel}`);
    const listing = await listWorkspaceFiles(ctx.scope, abs);
    const pattern = args.pattern ? cleanGlob(args.pattern) : undefined;
    const matcher = pattern ? compileGlob(pattern) : undefined;
    const files = matcher ? listing.files.filter((file) => matchesGlob(matcher, file, rel, pattern?.includes('/'))) : listing.files;

    const where = `under ${rel === '.' ? 'the workspace root' : rel}${args.pattern ? ` matching ${args.pattern}` : ''}`;
    const note = listing.source === 'walk' ? ' (not a git repository: .gitignore not applied; node_modules and .git skipped)' : '';
    if (files.length === 0) return okResult(`no files ${where}${note}`, `listed 0 files ${where}`);
    const shown = files.slice(0, MAX_LISTED);
    const more = files.length - shown.length;
    const tail = more > 0 ? `\n… and ${more} more; narrow the path or the pattern to see them` : '';
    return okResult(
      `${plural(files.length, 'file')} ${where}${note}:\n${shown.join('\n')}${tail}`,
      `listed ${plural(files.length, 'file')} ${where}`,
    );
  },
});

type Loaded = { text: string; stats: Stats } | { result: ToolResult };

/** The file as UTF-8 text, or the error result explaining why it cannot be shown as text. */
async function loadText(abs: string, rel: string): Promise<Loaded> {
  const stats = await statIfExists(abs);
  if (!stats) return { result: errorResult(`no such file: ${rel}. Use list_files to see what exists.`) };
  if (stats.isDirectory()) return { result: errorResult(`${rel} is a directory; use list_files to see its files.`) };
  // A FIFO or device would block readFile forever.
  if (!stats.isFile()) return { result: errorResult(`${rel} is not a regular file (a pipe, socket or device).`) };
  if (stats.size > MAX_TEXT_BYTES) {
    const mb = (stats.size / 1024 / 1024).toFixed(1);
    return { result: errorResult(`${rel} is too large (${mb} MB) to load whole; use search, or run_command with head/sed/grep.`) };
  }
  const data = await fs.readFile(abs);
  if (looksBinary(data)) {
    return { result: errorResult(`${rel} is a binary file (${plural(data.length, 'byte')}); read_file and edit_file handle text only.`) };
  }
  return { text: data.toString('utf8'), stats };
}

async function statIfExists(abs: string): Promise<Stats | undefined> {
  try {
    return await fs.stat(abs);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Lines of `text`; a final newline ends the last line rather than starting an empty one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

function countLines(text: string): number {
  return text === '' ? 0 : splitLines(text).length;
}

/** Start offsets of every (possibly overlapping) occurrence. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) found.push(i);
  return found;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Where the model's text nearly matched, so the retry can copy the file's exact text. */
function missHint(text: string, oldText: string): string {
  const first = oldText
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim();
  if (first) {
    const lines = splitLines(text);
    const near = lines.flatMap((line, i) => (line.trim() === first.trim() ? [i + 1] : [])).slice(0, 5);
    if (near.length > 0) {
      return `Its first line appears at line ${near.join(', ')} when indentation is ignored: read those lines again and copy them exactly (whitespace included).`;
    }
  }
  return 'Read the file again (read_file) and copy the current text exactly.';
}

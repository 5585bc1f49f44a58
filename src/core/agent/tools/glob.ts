/**
 * A small glob dialect for list_files and search, so the tools need no dependency:
 * `**` (any number of directories), `*` (within one segment), `?`, `{a,b}` (nestable),
 * `[abc]` / `[!abc]`, and `\` to escape. Matching is on forward-slash paths.
 */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${translate(glob)}$`, 's');
}

/**
 * Whether `file` (workspace-relative, forward slashes) matches `pattern`. A pattern without
 * a slash matches the file name at any depth (`*.md`), as in .gitignore; one with a slash
 * matches the path from the workspace root, or from `base` when given (the listed folder).
 */
export function matchesGlob(pattern: string, file: string, base?: string): boolean {
  const cleaned = pattern.replace(/^\.\//, '').replace(/^\/+/, '');
  const regex = globToRegExp(cleaned);
  if (!cleaned.includes('/')) return regex.test(file.slice(file.lastIndexOf('/') + 1));
  if (regex.test(file)) return true;
  if (base && base !== '.' && file.startsWith(`${base}/`)) return regex.test(file.slice(base.length + 1));
  return false;
}

function translate(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const segmentStart = i === 0 || glob[i - 1] === '/';
        if (segmentStart && glob[i + 2] === '/') {
          out += '(?:.*/)?';
          i += 2;
        } else {
          out += '.*';
          i += 1;
        }
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '{') {
      const close = matchingBrace(glob, i);
      if (close < 0) {
        out += '\\{';
      } else {
        out += `(?:${splitAlternatives(glob.slice(i + 1, close)).map(translate).join('|')})`;
        i = close;
      }
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close < 0) {
        out += '\\[';
      } else {
        let body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        out += `[${body}]`;
        i = close;
      }
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegExp(glob[++i]);
    } else {
      out += escapeRegExp(c);
    }
  }
  return out;
}

function matchingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '{') depth++;
    else if (glob[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** Splits `a,{b,c},d` on the commas that are not inside a nested brace. */
function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

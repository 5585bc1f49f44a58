import type { SyntaxNode } from './shellParser';

/**
 * A word of a command as the shell would see it after quote removal. `value` is undefined when
 * the word depends on something only known when it runs (`$VAR`, `$(…)`, arithmetic): the rules
 * then judge it as unknown instead of guessing.
 */
export interface ShellWord {
  value: string | undefined;
  /** The source text, for messages and for config patterns when the value is unknown. */
  text: string;
  node: SyntaxNode;
}

export function shellWord(node: SyntaxNode): ShellWord {
  return { value: literal(node), text: node.text, node };
}

/** A word spelled out in the source (no expansion): literal text after quote removal. */
export function literal(node: SyntaxNode): string | undefined {
  switch (node.type) {
    case 'word':
    case 'command_name':
      return node.type === 'command_name' ? literalOfChildren(node) : unescapeWord(node.text);
    case 'number':
    case 'variable_name':
    case 'file_descriptor':
      return node.text;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'ansi_c_string':
      return ansiC(node.text.slice(2, -1));
    case 'string':
    case 'translated_string':
      return doubleQuoted(node);
    case 'concatenation':
      return literalOfChildren(node);
    default:
      return undefined; // expansions, substitutions, arithmetic, arrays: known only at run time
  }
}

function literalOfChildren(node: SyntaxNode): string | undefined {
  let out = '';
  for (const child of node.namedChildren) {
    if (!child) return undefined;
    const part = literal(child);
    if (part === undefined) return undefined;
    out += part;
  }
  return node.namedChildren.length === 0 ? unescapeWord(node.text) : out;
}

function doubleQuoted(node: SyntaxNode): string | undefined {
  if (node.namedChildren.some((child) => child?.type !== 'string_content')) return undefined;
  // from the source text: string_content nodes leave out some whitespace
  const inner = node.text.replace(/^\$?"/, '').replace(/"$/, '');
  return inner.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/** Backslash removal in an unquoted word: `\r\m` is `rm`, a backslash-newline disappears. */
export function unescapeWord(text: string): string {
  return text.replace(/\\(\n|.)/gs, (_m, c: string) => (c === '\n' ? '' : c));
}

function ansiC(text: string): string {
  const simple: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
  };
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/gs, (_m, c: string) => {
    if (c.startsWith('x')) return String.fromCharCode(parseInt(c.slice(1), 16));
    if (/^[0-7]+$/.test(c)) return String.fromCharCode(parseInt(c, 8));
    return simple[c] ?? `\\${c}`;
  });
}

/** The command word without its directory: `/usr/bin/sudo` is `sudo`, `./rm` is `rm`. */
export function commandBase(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash >= 0 ? name.slice(slash + 1) : name;
}

/** xargs' replace string (`-I R`, `-IR`, `--replace[=R]`, `-i[R]`), which stands for input. */
export function xargsReplace(args: ShellWord[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value;
    if (v === undefined || !v.startsWith('-')) return undefined;
    if (v === '-I') return args[i + 1]?.value;
    if (v.startsWith('-I')) return v.slice(2);
    if (v.startsWith('--replace')) return v.split('=')[1] ?? '{}';
    if (v.startsWith('-i')) return v.slice(2) || '{}';
  }
  return undefined;
}

/** Skips a wrapper's options (those in `withValue` take the next word) and returns the command it runs. */
export function afterOptions(args: ShellWord[], withValue: ReadonlySet<string>): ShellWord[] {
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === undefined || !v.startsWith('-') || v === '-') break;
    if (v === '--') {
      i++;
      break;
    }
    if (withValue.has(v)) i++;
  }
  return args.slice(i);
}

// The values a `for NAME in a b c` loop gives its variable, when they are spelled out: a write to
// `gen/$k/f$i.txt` inside such loops is judged for each path it can name instead of being asked as
// a path known only at run time (without a sandbox, that question ends an unattended task).
import type { Parser } from 'web-tree-sitter';
import type { SyntaxNode } from './shellParser';
import { literal, type ShellWord } from './shellWords';

/** Loop variables bound to their spelled-out values, innermost last. */
export type LoopValues = ReadonlyMap<string, readonly string[]>;

/** A value that means the same inside and outside quotes and in a path: no spaces, globs, quotes or expansions. */
const PLAIN = /^[A-Za-z0-9._+,:@%/=-]*$/;
/** At most this many paths are judged for one write (the product of the loops' values). */
const MAX_PATHS = 64;

/**
 * The variable and values of a `for` loop whose values are spelled out, unless its body may
 * change the variable (an assignment, `read`, arithmetic, a declaration): then undefined.
 */
export function loopBinding(loop: SyntaxNode): { name: string; values: string[] } | undefined {
  const name = loop.childForFieldName('variable')?.text;
  const body = loop.childForFieldName('body');
  const valueNodes = loop.childrenForFieldName('value').filter((v): v is SyntaxNode => v !== null);
  if (!name || !body || valueNodes.length === 0) return undefined;
  const values = valueNodes.map((v) => literal(v));
  if (values.some((v) => v === undefined || !PLAIN.test(v))) return undefined;
  const assigns = new RegExp(
    `(?:^|[^A-Za-z0-9_])${name}\\+?=|\\b(?:read|let|declare|local|typeset|export|readonly|mapfile|readarray|getopts|unset)\\b|\\(\\(`,
  );
  if (assigns.test(body.text)) return undefined;
  return { name, values: values as string[] };
}

/**
 * Every value `word` can take when its only expansions are loop variables in `bound`
 * (`gen/$k/f${i}.txt`); undefined when anything else in it is known only at run time.
 */
export function expandLoopWord(parser: Parser, word: SyntaxNode, bound: LoopValues): string[] | undefined {
  if (bound.size === 0) return undefined;
  const slots: { start: number; end: number; values: readonly string[] }[] = [];
  const visit = (node: SyntaxNode): boolean => {
    if (node.type === 'simple_expansion' || node.type === 'expansion') {
      const inner = node.namedChildren;
      const values = inner.length === 1 && inner[0]?.type === 'variable_name' ? bound.get(inner[0].text) : undefined;
      if (!values) return false;
      slots.push({ start: node.startIndex - word.startIndex, end: node.endIndex - word.startIndex, values });
      return true;
    }
    if (!['string', 'concatenation', 'string_content', 'word', 'raw_string'].includes(node.type)) return false;
    return node.namedChildren.every((child) => child !== null && visit(child));
  };
  if (!visit(word) || slots.length === 0) return undefined;
  let texts = [''];
  let at = 0;
  for (const slot of slots) {
    const before = word.text.slice(at, slot.start);
    texts = texts.flatMap((t) => slot.values.map((v) => `${t}${before}${v}`));
    if (texts.length > MAX_PATHS) return undefined;
    at = slot.end;
  }
  const out: string[] = [];
  for (const text of texts.map((t) => t + word.text.slice(at))) {
    const tree = parser.parse(`: ${text}`);
    const argument = tree?.rootNode.namedChildren[0]?.childrenForFieldName('argument')[0];
    const value = argument && !tree?.rootNode.hasError ? literal(argument) : undefined;
    tree?.delete();
    if (value === undefined) return undefined;
    out.push(value);
  }
  return out;
}

/**
 * A command's words once for each combination of the loop values its words take (`mkdir -p
 * gen/$k` in `for k in a b`); undefined when no word takes any, or there are too many.
 */
export function loopVariants(parser: Parser, words: ShellWord[], bound: LoopValues): ShellWord[][] | undefined {
  if (bound.size === 0) return undefined;
  let variants: ShellWord[][] = [[]];
  let any = false;
  for (const word of words) {
    const values = word.value === undefined ? expandLoopWord(parser, word.node, bound) : undefined;
    if (values) any = true;
    const forms = values ? values.map((value) => ({ ...word, value })) : [word];
    variants = variants.flatMap((v) => forms.map((form) => [...v, form]));
    if (variants.length > MAX_PATHS) return undefined;
  }
  return any ? variants : undefined;
}

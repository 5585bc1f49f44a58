import { positionals } from './commandRules';
import type { SyntaxNode } from './shellParser';
import { commandBase, literal, shellWord } from './shellWords';

/** Programs that fetch from the network: what they print or save is not the workspace's. */
export const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'xh', 'nc', 'ncat', 'socat', 'lynx']);

export interface StdinSources {
  downloads: boolean;
  /** Shell text fed on stdin that can be read here (here-docs, here-strings, `echo` of literals). */
  texts: string[];
  /** Commands whose output is fed and cannot be known. */
  unknown: string[];
}

/** What a command reading stdin gets: its own here-doc/here-string, or what comes down its pipeline. */
export function stdinSources(command: SyntaxNode): StdinSources {
  const out: StdinSources = { downloads: false, texts: [], unknown: [] };
  for (const child of command.namedChildren) if (child?.type === 'herestring_redirect') addText(out, child.namedChildren[0]);
  let stage = command;
  while (stage.parent?.type === 'redirected_statement' && stage.parent.childForFieldName('body')?.id === stage.id) {
    stage = stage.parent;
    for (const r of stage.childrenForFieldName('redirect')) {
      if (r?.type === 'heredoc_redirect') out.texts.push(heredocText(r));
      if (r?.type === 'herestring_redirect') addText(out, r.namedChildren[0]);
    }
  }
  const pipeline = stage.parent?.type === 'pipeline' ? stage.parent : undefined;
  if (!pipeline) return out;
  const upstream: SyntaxNode[] = [];
  for (const child of pipeline.namedChildren) {
    if (!child || child.id === stage.id) break;
    upstream.push(child);
  }
  // tree-sitter-bash puts `cat <<EOF | sh` as a pipeline inside the here-doc redirect
  if (pipeline.parent?.type === 'heredoc_redirect') {
    out.texts.push(heredocText(pipeline.parent));
    const body = pipeline.parent.parent?.childForFieldName('body');
    if (body) upstream.unshift(body);
  }
  for (const source of upstream) {
    if (containsDownloader(source)) {
      out.downloads = true;
      continue;
    }
    const words =
      source.type === 'command'
        ? [source.childForFieldName('name'), ...source.childrenForFieldName('argument')]
            .filter((n): n is SyntaxNode => n !== null)
            .map(shellWord)
        : [];
    const name = words[0]?.value === undefined ? undefined : commandBase(words[0].value);
    const literals = words.slice(1).map((w) => w.value);
    if (name === 'cat' && positionals(words.slice(1)).length === 0) continue; // passes its own stdin (the here-doc) on
    if ((name === 'echo' || name === 'printf') && literals.every((v) => v !== undefined)) {
      out.texts.push((literals as string[]).filter((v, k) => !(name === 'echo' && k === 0 && /^-[neE]+$/.test(v))).join(' '));
      continue;
    }
    out.unknown.push(source.text);
  }
  return out;
}

function addText(out: StdinSources, node: SyntaxNode | null | undefined): void {
  const value = node ? literal(node) : undefined;
  if (value === undefined) out.unknown.push(node?.text ?? '(here-string)');
  else out.texts.push(value);
}

function heredocText(redirect: SyntaxNode): string {
  return redirect.namedChildren
    .filter((c) => c?.type === 'heredoc_body')
    .map((c) => c?.text ?? '')
    .join('');
}

export function containsDownloader(node: SyntaxNode): boolean {
  return descendants(node, 'command').some((c) => {
    const name = c.childForFieldName('name');
    const value = name ? literal(name) : undefined;
    return (
      (value !== undefined && DOWNLOADERS.has(commandBase(value))) ||
      c.childrenForFieldName('argument').some((a) => {
        const v = a ? literal(a) : undefined;
        return v !== undefined && DOWNLOADERS.has(commandBase(v));
      })
    );
  });
}

export function descendants(node: SyntaxNode, type: string): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  const visit = (n: SyntaxNode) => {
    if (n.type === type) found.push(n);
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(node);
  return found;
}

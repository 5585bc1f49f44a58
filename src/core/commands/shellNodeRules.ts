// The nodes of a command line other than simple commands that the rules judge: redirects, assignments
// and declarations, function definitions.
import { excerpt, type State } from './analysisState';
import { judgeWrite, resolvePath } from './commandPaths';
import { judgeCredentialWord, judgeEnvironmentDump } from './credentialRules';
import { containsDownloader, descendants } from './commandSources';
import type { SyntaxNode } from './shellParser';
import { expandLoopWord } from './loopValues';
import { literal, shellWord } from './shellWords';

export function judgeRedirect(st: State, node: SyntaxNode): void {
  const operator = node.children.find((c) => c && !c.isNamed)?.type ?? '';
  const destination = node.childForFieldName('destination');
  if (destination && (operator === '<' || operator === '<>')) {
    const read = judgeCredentialWord(shellWord(destination), st.where);
    if (read) st.findings.push({ ...read, command: node.text });
  }
  if (!destination || operator === '<' || operator === '<&' || operator === '>&-' || operator === '<&-') return;
  if ((operator === '>&' || operator === '<&') && (destination.type === 'number' || destination.text === '-')) return;
  const value = literal(destination);
  const expanded = value === undefined ? expandLoopWord(st.parser, destination, st.loops) : undefined;
  if (expanded) {
    for (const each of expanded) {
      const target = resolvePath(each, st.where);
      if (target === undefined) st.writtenUnknown = true;
      else st.written.add(target);
      const verdict = judgeWrite(each, each, st.where, `redirecting output (${operator})`);
      if (verdict) st.findings.push({ ...verdict, command: node.text });
    }
    return;
  }
  const abs = value === undefined ? undefined : resolvePath(value, st.where);
  if (abs === undefined) st.writtenUnknown = true;
  else st.written.add(abs);
  const verdict = judgeWrite(value, destination.text, st.where, `redirecting output (${operator})`);
  if (verdict) st.findings.push({ ...verdict, command: node.text });
  const body = node.parent?.type === 'redirected_statement' ? node.parent.childForFieldName('body') : undefined;
  if (abs !== undefined && body && containsDownloader(body)) st.downloaded.add(abs);
}

/**
 * Words outside a command's arguments that can name a file to read: an assignment's value
 * (`K=~/.ssh/id_rsa; cat $K`), a here-string; and `export` / `declare -p` alone, which print
 * the environment.
 */
export function judgeReads(st: State, node: SyntaxNode): void {
  if (node.type === 'declaration_command') {
    const keyword = node.children[0]?.type ?? 'declare';
    const words = node.namedChildren.filter((c): c is SyntaxNode => c !== null).map(shellWord);
    const dump = judgeEnvironmentDump(keyword, words);
    if (dump) st.findings.push({ ...dump, command: excerpt(node.text) });
    return;
  }
  const value = node.type === 'variable_assignment' ? node.childForFieldName('value') : node.namedChildren[0];
  if (!value) return;
  const read = judgeCredentialWord(shellWord(value), st.where);
  if (read) st.findings.push({ ...read, command: excerpt(node.text) });
}

export function judgeFunction(st: State, node: SyntaxNode): void {
  const name = node.childForFieldName('name')?.text;
  const body = node.childForFieldName('body');
  if (!name || !body) return;
  const selfCalls = descendants(body, 'command').filter((c) => literal(c.childForFieldName('name') ?? c) === name);
  if (selfCalls.some((c) => c.parent?.type === 'pipeline'))
    st.findings.push({ action: 'deny', reason: 'a fork bomb (a function that pipes into itself)', command: excerpt(node.text) });
  else if (selfCalls.length > 0) st.findings.push({ action: 'ask', reason: `function ${name} calls itself`, command: excerpt(node.text) });
}
